{{/* The raycluster component's rules (called by verl-ppo.validate): pods that fit their nodes, the
     workers training needs, and no door to the dashboard (which runs any code it is sent) without a lock. */}}
{{- define "raycluster.rules" -}}
{{- include "raycluster.rules.shape" . -}}
{{- include "raycluster.rules.exposure" . -}}
{{- include "raycluster.rules.observability" . -}}
{{- range $name, $value := .Values.nccl -}}
{{- if not (regexMatch "^NCCL_[A-Z0-9_]+$" $name) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%snccl.%s" $.prefix $name) "value" $value "problem" "is not an NCCL_* variable" "fix" (printf "put other variables in %senv" $.prefix)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Worker count and pod sizes against the GPU node type the values were made for. */}}
{{- define "raycluster.rules.shape" -}}
{{- $v := .Values -}}
{{- $shape := $v.gpuShape -}}
{{- $workers := include "verl-ppo.workerReplicas" (dict "Values" $v "trainsOnHead" $v.head.trainsOnHead) | int -}}
{{- if and (not $v.head.trainsOnHead) (lt $workers 1) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.gpu.nodes" "value" $v.global.gpu.nodes "problem" "leaves no GPU worker with a CPU-only head" "fix" "--set global.gpu.nodes=1 or more") -}}
{{- end -}}
{{- $autoscaling := $v.worker.autoscaling -}}
{{- if and $autoscaling.enabled (or (gt (int $autoscaling.minReplicas) $workers) (lt (int $autoscaling.maxReplicas) $workers)) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%sworker.autoscaling" .prefix) "value" (printf "min %d, max %d" (int $autoscaling.minReplicas) (int $autoscaling.maxReplicas)) "problem" (printf "does not contain the %d workers training needs (global.gpu.nodes)" $workers) "fix" (printf "--set %sworker.autoscaling.minReplicas=%d (or less) --set %sworker.autoscaling.maxReplicas=%d (or more)" .prefix $workers .prefix $workers)) -}}
{{- end -}}
{{- $cpuLimit := include "verl-ppo.cpuMillis" $shape.allocatable.cpu | int64 -}}
{{- $memoryLimit := include "verl-ppo.memoryMiB" $shape.allocatable.memory | int64 -}}
{{- range $role := list "head" "worker" -}}
{{- $resources := (get $v $role).resources -}}
{{- if gt (include "verl-ppo.cpuMillis" $resources.cpu | int64) $cpuLimit -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s%s.resources.cpu" $.prefix $role) "value" $resources.cpu "problem" (printf "does not fit the %v allocatable CPU of a %s node (%sgpuShape.allocatable.cpu)" $shape.allocatable.cpu $shape.name $.prefix) "fix" (printf "--set %s%s.resources.cpu=<at most %v>; the generator uses 80%% of allocatable" $.prefix $role $shape.allocatable.cpu)) -}}
{{- end -}}
{{- if gt (include "verl-ppo.memoryMiB" $resources.memory | int64) $memoryLimit -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s%s.resources.memory" $.prefix $role) "value" $resources.memory "problem" (printf "does not fit the %v allocatable memory of a %s node (%sgpuShape.allocatable.memory)" $shape.allocatable.memory $shape.name $.prefix) "fix" (printf "--set %s%s.resources.memory=<at most %v>; the generator uses 80%% of allocatable" $.prefix $role $shape.allocatable.memory)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The head Service and the dashboard Ingress: exposure needs an explicit choice and an access control. */}}
{{- define "raycluster.rules.exposure" -}}
{{- $p := .prefix -}}
{{- $head := .Values.head -}}
{{- if and (ne $head.serviceType "ClusterIP") (not $head.allowUnauthenticatedService) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%shead.serviceType" $p) "value" $head.serviceType "problem" "publishes the Ray dashboard and client ports, which run any code they are sent, outside the cluster without an access control" "fix" (printf "keep ClusterIP and expose the dashboard through %singress with an access control, or accept the risk with --set %shead.allowUnauthenticatedService=true" $p $p)) -}}
{{- end -}}
{{- $ingress := .Values.ingress -}}
{{- if $ingress.enabled -}}
{{- $access := $ingress.accessControl -}}
{{- if and (ne $ingress.provider "nginx") (or $access.sourceRanges $access.basicAuthSecret) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%singress.accessControl" $p) "value" $ingress.provider "problem" "sourceRanges and basicAuthSecret are applied through nginx annotations only" "fix" (printf "with provider alb or other, restrict access on the load balancer (e.g. an ALB listener ACL) and --set %singress.accessControl.enforcedExternally=true" $p)) -}}
{{- else if not (or $access.sourceRanges $access.basicAuthSecret $access.enforcedExternally $ingress.allowUnauthenticated) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%singress.enabled" $p) "value" true "problem" "exposes the Ray dashboard, which runs any job it is sent, without an access control" "fix" (printf "set %singress.accessControl.sourceRanges or .basicAuthSecret (nginx), or --set %singress.accessControl.enforcedExternally=true, or accept the risk with --set %singress.allowUnauthenticated=true" $p $p $p)) -}}
{{- else if and .Values.networkPolicy.enabled (not .Values.networkPolicy.dashboardFrom) (not .Values.networkPolicy.dashboardFromAnywhere) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%snetworkPolicy.dashboardFrom" $p) "value" "[]" "problem" "is empty while the Ingress is on: any pod could reach the dashboard port directly, past the Ingress's access control" "fix" (printf "name the ingress controller's peers, e.g. --set-json '%snetworkPolicy.dashboardFrom=[{\"namespaceSelector\":{\"matchLabels\":{\"kubernetes.io/metadata.name\":\"ingress-nginx\"}}}]' (an ipBlock of the load balancer's subnet for an ALB), or accept it with --set %snetworkPolicy.dashboardFromAnywhere=true" $p $p)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The TensorBoard path needs TensorBoard and the dashboard Ingress; an OTLP endpoint needs the hook. */}}
{{- define "raycluster.rules.observability" -}}
{{- $p := .prefix -}}
{{- $path := .Values.global.tensorboard.ingressPath -}}
{{- if $path -}}
{{- if not .Values.global.tensorboard.enabled -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" "routes to TensorBoard, which is off" "fix" "--set global.tensorboard.enabled=true, or --set global.tensorboard.ingressPath=''") -}}
{{- else if not .Values.ingress.enabled -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" "is a path on the dashboard Ingress, which is off" "fix" (printf "--set %singress.enabled=true (with an access control), or --set global.tensorboard.ingressPath=''" $p)) -}}
{{- else if eq (trimSuffix "/" $path) (trimSuffix "/" .Values.ingress.path) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" (printf "is the Ray dashboard's own path (%singress.path)" $p) "fix" "use another path, e.g. --set global.tensorboard.ingressPath=/tensorboard") -}}
{{- end -}}
{{- end -}}
{{- $hook := .Values.tracing.startupHook -}}
{{- if and $hook.otlpEndpoint (not $hook.enabled) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%stracing.startupHook.otlpEndpoint" $p) "value" $hook.otlpEndpoint "problem" "is used only by the tracing startup hook, which is off" "fix" (printf "--set %stracing.startupHook.enabled=true, or --set %stracing.startupHook.otlpEndpoint=''" $p $p)) -}}
{{- end -}}
{{- end -}}
