// Package cache is kinformer's reimplementation of k8s.io/client-go/tools/cache.
//
// It keeps a client-side, indexed, event-driven cache of Kubernetes API objects in
// step with the API server. The exported names and signatures are those of
// client-go v0.37.2, so a program moves over by changing its import path.
package cache
