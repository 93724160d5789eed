// Package soak holds kinformer's soak test: five informers of different types (pods and
// configmaps over JSON, secrets and services over protobuf, a custom resource through the
// dynamic informer) run against a real etcd and kube-apiserver (internal/testenv) through
// the fault-injecting proxy (internal/faultproxy), while a writer creates, updates and
// deletes their objects through the API and a scheduler injects a fault every few seconds,
// drawn with a fixed seed from every kind the proxy and the test environment offer. When
// the faults stop, internal/invariant checks that every informer converged: its store
// equals a fresh consistent LIST, its handler's last event per object matches the object's
// final state, and no object's resourceVersion ever went back.
//
// TestSoakShort runs in `make test`, once for each of a fixed list of seeds;
// TestSoakLong (20,000 objects, writes at up to 500 per second for 60 seconds) runs with
// `make soak`, which also runs TestSoakShort, both with fresh random seeds;
// TestSoakCeiling (`make soak-ceiling`) measures what bounds the write rate without
// faults. The seed is printed; set KINFORMER_SOAK_SEED to replay a run's fault sequence.
package soak
