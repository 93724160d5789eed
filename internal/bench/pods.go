package bench

import (
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodNamespaces is how many namespaces NewPod spreads pods over.
const PodNamespaces = 50

// podsPerOwner is how many consecutive pods share a ReplicaSet.
const podsPerOwner = 10

// PodKey returns the namespace/name key of the pod NewPod(i, ...) builds.
func PodKey(i int) string {
	return podNamespace(i) + "/" + podName(i)
}

func podNamespace(i int) string {
	return "team-" + strconv.Itoa(i%PodNamespaces)
}

func podOwner(i int) string {
	return "checkout-api-" + strconv.Itoa(i/podsPerOwner)
}

func podName(i int) string {
	return podOwner(i) + "-7d9f8b6c5d-" + strconv.Itoa(100000+i)
}

// fresh returns a heap copy of s, so that generated objects own all their
// strings, as decoded objects do (string constants would live in the
// binary and make the objects look smaller than they are).
func fresh(s string) string {
	return strings.Clone(s)
}

// podManagedFields is a realistic FieldsV1 document for a pod written by the
// kubelet (status) and the ReplicaSet controller (spec).
const podManagedFieldsSpec = `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/restartedAt":{},"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}},"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:tier":{},"f:version":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"00000000-0000-0000-0000-000000000000\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}}},"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`

const podManagedFieldsStatus = `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.0.0.1\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`

// podQuantities are parsed once; resource.Quantity values are copied by
// value into every pod.
var podQuantities = struct {
	cpuReq, cpuLim, memReq, memLim, sideCPU, sideMem resource.Quantity
}{
	cpuReq:  resource.MustParse("250m"),
	cpuLim:  resource.MustParse("1"),
	memReq:  resource.MustParse("256Mi"),
	memLim:  resource.MustParse("512Mi"),
	sideCPU: resource.MustParse("50m"),
	sideMem: resource.MustParse("64Mi"),
}

// NewPod returns the i-th pod of a realistic population, at resourceVersion
// rv: labels, annotations, an owner reference to its ReplicaSet, two
// containers with resources, env and ports, a status with conditions and
// container statuses, and managedFields of two managers. Every string and
// slice is freshly allocated, as if the pod had just been decoded. Pods are
// spread over PodNamespaces namespaces; NewPod(i, ...) always has the key
// PodKey(i).
func NewPod(i int, rv string) *v1.Pod {
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * time.Second))
	ownerUID := types.UID(fresh("0b5b1c3e-6f4a-4d2b-9c1e-" + strconv.Itoa(100000000000+i/podsPerOwner)))
	ip := "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)
	node := "node-" + strconv.Itoa(i%200) + ".eu-west-1.compute.internal"
	truth := true
	grace := int64(30)
	q := podQuantities

	env := func() []v1.EnvVar {
		return []v1.EnvVar{
			{Name: fresh("LOG_LEVEL"), Value: fresh("info")},
			{Name: fresh("HTTP_PORT"), Value: fresh("8080")},
			{Name: fresh("OTEL_EXPORTER_OTLP_ENDPOINT"), Value: fresh("http://otel-collector.observability:4317")},
			{Name: fresh("POD_NAME"), ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: fresh("v1"), FieldPath: fresh("metadata.name")}}},
			{Name: fresh("POD_NAMESPACE"), ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: fresh("v1"), FieldPath: fresh("metadata.namespace")}}},
		}
	}
	mounts := func() []v1.VolumeMount {
		return []v1.VolumeMount{
			{Name: fresh("config"), MountPath: fresh("/etc/checkout"), ReadOnly: true},
			{Name: fresh("kube-api-access-x7k2p"), MountPath: fresh("/var/run/secrets/kubernetes.io/serviceaccount"), ReadOnly: true},
		}
	}
	started := created.Add(3 * time.Second)
	condition := func(t v1.PodConditionType) v1.PodCondition {
		return v1.PodCondition{Type: v1.PodConditionType(fresh(string(t))), Status: v1.ConditionStatus(fresh("True")), LastTransitionTime: metav1.NewTime(started)}
	}
	containerStatus := func(name, image string) v1.ContainerStatus {
		return v1.ContainerStatus{
			Name:         fresh(name),
			State:        v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}},
			Ready:        true,
			Image:        fresh(image),
			ImageID:      fresh("registry.example.com/" + image + "@sha256:4f2a1c0e9b8d7c6a5f4e3d2c1b0a99887766554433221100ffeeddccbbaa9988"),
			ContainerID:  fresh("containerd://" + strconv.Itoa(1000000000+i) + "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6"),
			Started:      &truth,
			RestartCount: int32(i % 3),
		}
	}

	return &v1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: fresh("Pod"), APIVersion: fresh("v1")},
		ObjectMeta: metav1.ObjectMeta{
			Name:              podName(i),
			GenerateName:      podOwner(i) + "-7d9f8b6c5d-",
			Namespace:         podNamespace(i),
			UID:               types.UID(fresh("6c1f6e2a-3b4d-4e5f-8a9b-" + strconv.Itoa(100000000000+i))),
			ResourceVersion:   fresh(rv),
			CreationTimestamp: created,
			Labels: map[string]string{
				fresh("app"):               podOwner(i),
				fresh("pod-template-hash"): fresh("7d9f8b6c5d"),
				fresh("tier"):              fresh("backend"),
				fresh("version"):           fresh("v1.42." + strconv.Itoa(i%7)),
			},
			Annotations: map[string]string{
				fresh("kubectl.kubernetes.io/restartedAt"): fresh("2026-01-02T03:04:05Z"),
				fresh("prometheus.io/scrape"):              fresh("true"),
				fresh("prometheus.io/port"):                fresh("9090"),
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         fresh("apps/v1"),
				Kind:               fresh("ReplicaSet"),
				Name:               podOwner(i) + "-7d9f8b6c5d",
				UID:                ownerUID,
				Controller:         &truth,
				BlockOwnerDeletion: &truth,
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{
					Manager:    fresh("kube-controller-manager"),
					Operation:  metav1.ManagedFieldsOperationUpdate,
					APIVersion: fresh("v1"),
					Time:       &created,
					FieldsType: fresh("FieldsV1"),
					FieldsV1:   &metav1.FieldsV1{Raw: []byte(podManagedFieldsSpec)},
				},
				{
					Manager:     fresh("kubelet"),
					Operation:   metav1.ManagedFieldsOperationUpdate,
					APIVersion:  fresh("v1"),
					Time:        &created,
					FieldsType:  fresh("FieldsV1"),
					FieldsV1:    &metav1.FieldsV1{Raw: []byte(podManagedFieldsStatus)},
					Subresource: fresh("status"),
				},
			},
		},
		Spec: v1.PodSpec{
			Volumes: []v1.Volume{
				{Name: fresh("config"), VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: fresh("checkout-config")}}}},
				{Name: fresh("kube-api-access-x7k2p"), VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
					{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: fresh("token")}},
					{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: fresh("kube-root-ca.crt")}, Items: []v1.KeyToPath{{Key: fresh("ca.crt"), Path: fresh("ca.crt")}}}},
				}}}},
			},
			Containers: []v1.Container{
				{
					Name:  fresh("app"),
					Image: fresh("registry.example.com/checkout-api:v1.42.3"),
					Args:  []string{fresh("--config=/etc/checkout/config.yaml"), fresh("--metrics-port=9090")},
					Ports: []v1.ContainerPort{
						{Name: fresh("http"), ContainerPort: 8080, Protocol: v1.ProtocolTCP},
						{Name: fresh("metrics"), ContainerPort: 9090, Protocol: v1.ProtocolTCP},
					},
					Env: env(),
					Resources: v1.ResourceRequirements{
						Requests: v1.ResourceList{v1.ResourceCPU: q.cpuReq, v1.ResourceMemory: q.memReq},
						Limits:   v1.ResourceList{v1.ResourceCPU: q.cpuLim, v1.ResourceMemory: q.memLim},
					},
					VolumeMounts: mounts(),
					ReadinessProbe: &v1.Probe{
						ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: fresh("/readyz"), Scheme: v1.URISchemeHTTP}},
						PeriodSeconds: 10,
					},
					TerminationMessagePath:   fresh("/dev/termination-log"),
					TerminationMessagePolicy: v1.TerminationMessageReadFile,
					ImagePullPolicy:          v1.PullIfNotPresent,
				},
				{
					Name:  fresh("sidecar"),
					Image: fresh("registry.example.com/envoy-proxy:v1.30.1"),
					Env:   env()[:3],
					Resources: v1.ResourceRequirements{
						Requests: v1.ResourceList{v1.ResourceCPU: q.sideCPU, v1.ResourceMemory: q.sideMem},
						Limits:   v1.ResourceList{v1.ResourceMemory: q.sideMem},
					},
					VolumeMounts:             mounts()[1:],
					TerminationMessagePath:   fresh("/dev/termination-log"),
					TerminationMessagePolicy: v1.TerminationMessageReadFile,
					ImagePullPolicy:          v1.PullIfNotPresent,
				},
			},
			RestartPolicy:                 v1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     v1.DNSClusterFirst,
			ServiceAccountName:            fresh("checkout-api"),
			NodeName:                      node,
			SchedulerName:                 fresh("default-scheduler"),
			Tolerations: []v1.Toleration{
				{Key: fresh("node.kubernetes.io/not-ready"), Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
				{Key: fresh("node.kubernetes.io/unreachable"), Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
			},
		},
		Status: v1.PodStatus{
			Phase: v1.PodRunning,
			Conditions: []v1.PodCondition{
				condition(v1.PodInitialized),
				condition(v1.PodReady),
				condition(v1.ContainersReady),
				condition(v1.PodScheduled),
			},
			HostIP:    fresh("192.168.3." + strconv.Itoa(i%200)),
			PodIP:     ip,
			PodIPs:    []v1.PodIP{{IP: fresh(ip)}},
			StartTime: &created,
			ContainerStatuses: []v1.ContainerStatus{
				containerStatus("app", "checkout-api:v1.42.3"),
				containerStatus("sidecar", "envoy-proxy:v1.30.1"),
			},
			QOSClass: v1.PodQOSBurstable,
		},
	}
}

// NewPodList returns a PodList of NewPod(first..first+n-1, rv) at list
// resourceVersion rv.
func NewPodList(first, n int, rv string) *v1.PodList {
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: make([]v1.Pod, n)}
	for j := range n {
		list.Items[j] = *NewPod(first+j, rv)
	}
	return list
}
