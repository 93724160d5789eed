package projection

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The objects below hold what real objects hold, so that a projection of
// them drops something everywhere: managed fields, owner references, several
// containers, volumes of several kinds (whose sources are inlined in JSON but
// a nested message in protobuf), probes, resources, tolerations, statuses.
// Timestamps are whole seconds: JSON keeps no more.

var pbT0 = metav1.NewTime(time.Date(2026, 3, 1, 10, 20, 30, 0, time.UTC))

func pbTestPod(name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			GenerateName:      "web-7c9f-",
			Namespace:         "shop",
			UID:               types.UID("0b7e0d16-6a5e-4b0e-9d8e-" + name),
			ResourceVersion:   "48213",
			Generation:        3,
			CreationTimestamp: pbT0,
			Labels: map[string]string{
				"app":               "web",
				"pod-template-hash": "7c9f",
				"tier":              "frontend",
			},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": "2026-03-01T10:00:00Z",
				"team":                              "storefront",
				"prometheus.io/scrape":              "true",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "apps/v1",
				Kind:               "ReplicaSet",
				Name:               "web-7c9f",
				UID:                "5d0c1e6a-1f0b-4d62-8e0f-2c1a3b4c5d6e",
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
			Finalizers: []string{"shop.example.com/drain"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{
					Manager:    "kube-controller-manager",
					Operation:  metav1.ManagedFieldsOperationUpdate,
					APIVersion: "v1",
					Time:       &pbT0,
					FieldsType: "FieldsV1",
					FieldsV1:   &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{}}}`)},
				},
				{
					Manager:     "kubelet",
					Operation:   metav1.ManagedFieldsOperationUpdate,
					APIVersion:  "v1",
					Time:        &pbT0,
					FieldsType:  "FieldsV1",
					FieldsV1:    &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{},"f:phase":{}}}`)},
					Subresource: "status",
				},
			},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"},
					Items:                []corev1.KeyToPath{{Key: "app.yaml", Path: "app.yaml", Mode: ptr.To[int32](0o444)}},
					DefaultMode:          ptr.To[int32](0o644),
				}}},
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
					Medium:    corev1.StorageMediumMemory,
					SizeLimit: ptr.To(resource.MustParse("256Mi")),
				}}},
				{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
					SecretName: "web-tls",
					Optional:   ptr.To(false),
				}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					},
					DefaultMode: ptr.To[int32](0o644),
				}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "web-data"}}},
			},
			InitContainers: []corev1.Container{{
				Name:         "migrate",
				Image:        "registry.example.com/shop/migrate:1.4.2",
				Command:      []string{"/migrate", "--up"},
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/web"}},
			}},
			Containers: []corev1.Container{
				{
					Name:       "web",
					Image:      "registry.example.com/shop/web:1.4.2",
					Command:    []string{"/web"},
					Args:       []string{"--port=8080", "--config=/etc/web/app.yaml"},
					WorkingDir: "/srv",
					Ports: []corev1.ContainerPort{
						{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
						{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP},
					},
					Env: []corev1.EnvVar{
						{Name: "MODE", Value: "production"},
						{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
							LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password",
						}}},
						{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
					},
					Resources: corev1.ResourceRequirements{
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
					},
					VolumeMounts: []corev1.VolumeMount{
						{Name: "config", MountPath: "/etc/web", ReadOnly: true},
						{Name: "cache", MountPath: "/cache"},
						{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
					},
					LivenessProbe: &corev1.Probe{
						ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
						InitialDelaySeconds: 5,
						PeriodSeconds:       10,
						TimeoutSeconds:      1,
						SuccessThreshold:    1,
						FailureThreshold:    3,
					},
					ReadinessProbe: &corev1.Probe{
						ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
						PeriodSeconds: 5,
					},
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					ImagePullPolicy:          corev1.PullIfNotPresent,
					SecurityContext: &corev1.SecurityContext{
						RunAsNonRoot:             ptr.To(true),
						AllowPrivilegeEscalation: ptr.To(false),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				},
				{
					Name:      "sidecar",
					Image:     "registry.example.com/proxy:2.0",
					Ports:     []corev1.ContainerPort{{Name: "proxy", ContainerPort: 15001, Protocol: corev1.ProtocolTCP}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
				},
			},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			DNSPolicy:                     corev1.DNSClusterFirst,
			NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
			ServiceAccountName:            "web",
			NodeName:                      "node-a1",
			SecurityContext:               &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000)},
			SchedulerName:                 corev1.DefaultSchedulerName,
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
			Priority:           ptr.To[int32](0),
			EnableServiceLinks: ptr.To(true),
			PreemptionPolicy:   ptr.To(corev1.PreemptLowerPriority),
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: pbT0},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: pbT0},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: pbT0},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: pbT0},
			},
			HostIP:    "10.0.3.17",
			HostIPs:   []corev1.HostIP{{IP: "10.0.3.17"}},
			PodIP:     "10.244.3.9",
			PodIPs:    []corev1.PodIP{{IP: "10.244.3.9"}},
			StartTime: &pbT0,
			InitContainerStatuses: []corev1.ContainerStatus{{
				Name:         "migrate",
				State:        corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: pbT0, FinishedAt: pbT0, ContainerID: "containerd://aa"}},
				Ready:        true,
				Image:        "registry.example.com/shop/migrate:1.4.2",
				ImageID:      "registry.example.com/shop/migrate@sha256:0123",
				ContainerID:  "containerd://aa",
				RestartCount: 0,
			}},
			ContainerStatuses: []corev1.ContainerStatus{
				{
					Name:  "web",
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: pbT0}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
						ExitCode: 137, Reason: "OOMKilled", StartedAt: pbT0, FinishedAt: pbT0,
					}},
					Ready:        true,
					RestartCount: 2,
					Image:        "registry.example.com/shop/web:1.4.2",
					ImageID:      "registry.example.com/shop/web@sha256:4567",
					ContainerID:  "containerd://bb",
					Started:      ptr.To(true),
				},
				{
					Name:        "sidecar",
					State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: pbT0}},
					Ready:       true,
					Image:       "registry.example.com/proxy:2.0",
					ImageID:     "registry.example.com/proxy@sha256:89ab",
					ContainerID: "containerd://cc",
					Started:     ptr.To(true),
				},
			},
			QOSClass: corev1.PodQOSBurstable,
		},
	}
}

func pbTestNode() *corev1.Node {
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              "node-a1",
			UID:               "7f1d2c3b-0000-4000-8000-000000000001",
			ResourceVersion:   "99120",
			CreationTimestamp: pbT0,
			Labels: map[string]string{
				"kubernetes.io/hostname":           "node-a1",
				"kubernetes.io/os":                 "linux",
				"topology.kubernetes.io/zone":      "eu-west-1a",
				"node.kubernetes.io/instance-type": "m7.large",
			},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec: corev1.NodeSpec{
			PodCIDR:    "10.244.3.0/24",
			PodCIDRs:   []string{"10.244.3.0/24"},
			ProviderID: "aws:///eu-west-1a/i-0abc",
			Taints: []corev1.Taint{
				{Key: "dedicated", Value: "shop", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute, TimeAdded: &pbT0},
			},
		},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("2"),
				corev1.ResourceMemory: resource.MustParse("8005720Ki"),
				corev1.ResourcePods:   resource.MustParse("110"),
			},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("1930m"),
				corev1.ResourceMemory: resource.MustParse("7291992Ki"),
				corev1.ResourcePods:   resource.MustParse("110"),
			},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: pbT0, LastTransitionTime: pbT0, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: pbT0, LastTransitionTime: pbT0, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "10.0.3.17"},
				{Type: corev1.NodeHostName, Address: "node-a1"},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: "ec2a", SystemUUID: "ec2a", BootID: "b00t", KernelVersion: "6.8.0",
				OSImage: "Ubuntu 24.04", ContainerRuntimeVersion: "containerd://2.0.0",
				KubeletVersion: "v1.37.2", KubeProxyVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64",
			},
			Images: []corev1.ContainerImage{
				{Names: []string{"registry.example.com/shop/web@sha256:4567", "registry.example.com/shop/web:1.4.2"}, SizeBytes: 52428800},
				{Names: []string{"registry.example.com/proxy:2.0"}, SizeBytes: 20971520},
			},
		},
	}
}

func pbTestDeployment() *appsv1.Deployment {
	pod := pbTestPod("template")
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "d0d0d0d0-0000-4000-8000-000000000002",
			ResourceVersion: "48100", Generation: 7, CreationTimestamp: pbT0,
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "7"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{
				MatchLabels:      map[string]string{"app": "web", "tier": "frontend"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "staging"}}},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "frontend"}, Annotations: map[string]string{"team": "storefront"}},
				Spec:       pod.Spec,
			},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr.To(intstr.FromString("25%")),
					MaxSurge:       ptr.To(intstr.FromInt32(1)),
				},
			},
			RevisionHistoryLimit:    ptr.To[int32](10),
			ProgressDeadlineSeconds: ptr.To[int32](600),
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 7, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, UnavailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, LastUpdateTime: pbT0, LastTransitionTime: pbT0, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, LastUpdateTime: pbT0, LastTransitionTime: pbT0, Reason: "NewReplicaSetAvailable", Message: `ReplicaSet "web-7c9f" has successfully progressed.`},
			},
		},
	}
}

func pbTestService() *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "5e5e5e5e-0000-4000-8000-000000000003",
			ResourceVersion: "47000", CreationTimestamp: pbT0,
			Labels: map[string]string{"app": "web"},
		},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromString("http")},
				{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromInt32(9090), NodePort: 30090},
			},
			Selector:              map[string]string{"app": "web"},
			ClusterIP:             "10.96.12.34",
			ClusterIPs:            []string{"10.96.12.34"},
			Type:                  corev1.ServiceTypeNodePort,
			SessionAffinity:       corev1.ServiceAffinityNone,
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster,
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:        ptr.To(corev1.IPFamilyPolicySingleStack),
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{}},
	}
}

func pbTestConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-config", Namespace: "shop", UID: "c0c0c0c0-0000-4000-8000-000000000004",
			ResourceVersion: "46000", CreationTimestamp: pbT0,
			Annotations: map[string]string{"note": "managed by hand", "other": "x"},
		},
		Data:       map[string]string{"key1": "value1", "app.yaml": "port: 8080\n", "key2": "value2"},
		BinaryData: map[string][]byte{"blob": {0, 1, 2, 3, 255}},
		Immutable:  ptr.To(false),
	}
}
