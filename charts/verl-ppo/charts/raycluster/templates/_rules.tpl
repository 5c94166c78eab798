{{/* The raycluster component's rules (called by verl-ppo.validate): pods that fit their nodes, the
     workers training needs, and no door to the dashboard (which runs any code it is sent) without a lock. */}}
{{- define "raycluster.rules" -}}
{{- include "raycluster.rules.shape" . -}}
{{- include "raycluster.rules.exposure" . -}}
{{- include "raycluster.rules.observability" . -}}
{{- include "raycluster.rules.env" . -}}
{{- include "raycluster.rules.queue" . -}}
{{- include "raycluster.rules.gcsFaultTolerance" . -}}
{{- include "raycluster.rules.rayAuth" . -}}
{{- include "raycluster.rules.queueUpgrade" . -}}
{{- range $name, $value := .Values.nccl -}}
{{- if not (regexMatch "^NCCL_[A-Z0-9_]+$" $name) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "raycluster.nccl.%s" $name) "value" $value "problem" "is not an NCCL_* variable" "fix" "put other variables in raycluster.env") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Worker count and pod sizes against the GPU node type the values were made for. */}}
{{- define "raycluster.rules.shape" -}}
{{- $v := .Values -}}
{{- $shape := $v.gpuShape -}}
{{- $workers := include "verl-ppo.workerReplicas" (dict "Values" $v "trainsOnHead" $v.head.trainsOnHead) | int -}}
{{- $autoscaling := $v.worker.autoscaling -}}
{{- if and $autoscaling.enabled (or (gt (int $autoscaling.minReplicas) $workers) (lt (int $autoscaling.maxReplicas) $workers)) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.worker.autoscaling" "value" (printf "min %d, max %d" (int $autoscaling.minReplicas) (int $autoscaling.maxReplicas)) "problem" (printf "does not contain the %d workers training needs (global.gpu.nodes)" $workers) "fix" (printf "--set raycluster.worker.autoscaling.minReplicas=%d (or less) --set raycluster.worker.autoscaling.maxReplicas=%d (or more)" $workers $workers)) -}}
{{- end -}}
{{- $cpuLimit := include "verl-ppo.cpuMillis" $shape.allocatable.cpu | int64 -}}
{{- $memoryLimit := include "verl-ppo.memoryMiB" $shape.allocatable.memory | int64 -}}
{{- range $role := list "head" "worker" -}}
{{- $resources := (get $v $role).resources -}}
{{- if gt (include "verl-ppo.cpuMillis" $resources.cpu | int64) $cpuLimit -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "raycluster.%s.resources.cpu" $role) "value" $resources.cpu "problem" (printf "does not fit the %v allocatable CPU of a %s node (raycluster.gpuShape.allocatable.cpu)" $shape.allocatable.cpu $shape.name) "fix" (printf "--set raycluster.%s.resources.cpu=<at most %v>; the generator uses 80%% of allocatable" $role $shape.allocatable.cpu)) -}}
{{- end -}}
{{- if gt (include "verl-ppo.memoryMiB" $resources.memory | int64) $memoryLimit -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "raycluster.%s.resources.memory" $role) "value" $resources.memory "problem" (printf "does not fit the %v allocatable memory of a %s node (raycluster.gpuShape.allocatable.memory)" $shape.allocatable.memory $shape.name) "fix" (printf "--set raycluster.%s.resources.memory=<at most %v>; the generator uses 80%% of allocatable" $role $shape.allocatable.memory)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The head Service and the dashboard Ingress: exposure needs an explicit choice and an access control. */}}
{{- define "raycluster.rules.exposure" -}}
{{- $head := .Values.head -}}
{{- if and (ne $head.serviceType "ClusterIP") (not $head.allowUnauthenticatedService) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.head.serviceType" "value" $head.serviceType "problem" "publishes the Ray dashboard and client ports, which run any code they are sent, outside the cluster without an access control" "fix" "keep ClusterIP and expose the dashboard through raycluster.ingress with an access control, or accept the risk with --set raycluster.head.allowUnauthenticatedService=true") -}}
{{- end -}}
{{- $ingress := .Values.ingress -}}
{{- if $ingress.enabled -}}
{{- $access := $ingress.accessControl -}}
{{- range $access.sourceRanges -}}
{{- if hasSuffix "/0" . -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.ingress.accessControl.sourceRanges" "value" . "problem" "admits every address: it is not an access control" "fix" "name the clients' networks, e.g. --set raycluster.ingress.accessControl.sourceRanges={10.0.0.0/8}") -}}
{{- end -}}
{{- end -}}
{{- $chartAnnotations := include "raycluster.ingressAnnotations" (dict "Values" .Values) | fromJson -}}
{{- range $key, $_ := $ingress.annotations -}}
{{- if or (hasKey $chartAnnotations $key) (has $key (list "nginx.ingress.kubernetes.io/whitelist-source-range" "nginx.ingress.kubernetes.io/satisfy" "nginx.ingress.kubernetes.io/auth-type" "nginx.ingress.kubernetes.io/auth-secret" "nginx.ingress.kubernetes.io/auth-url")) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "raycluster.ingress.annotations.%s" $key) "value" (get $ingress.annotations $key) "problem" "would replace the access control the chart sets from ingress.accessControl" "fix" "remove it and set raycluster.ingress.accessControl (sourceRanges, basicAuthSecret), or enforce access outside the chart with --set raycluster.ingress.accessControl.enforcedExternally=true") -}}
{{- end -}}
{{- end -}}
{{- /* Each rule on its own: a first install hears of every one it breaks (an ALB needs its listener restricted
       and the NetworkPolicy's peers named, together). */ -}}
{{- $nginx := eq $ingress.provider "nginx" -}}
{{- if and (not $nginx) (or $access.sourceRanges $access.basicAuthSecret) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.ingress.accessControl" "value" $ingress.provider "problem" "sourceRanges and basicAuthSecret are applied through nginx annotations only" "fix" "with provider alb or other, restrict access on the load balancer (e.g. an ALB listener ACL) and --set raycluster.ingress.accessControl.enforcedExternally=true") -}}
{{- end -}}
{{- if not (include "raycluster.ingressAccessControls" .Values | fromJsonArray) -}}
{{- $fix := "set raycluster.ingress.accessControl.sourceRanges or .basicAuthSecret (nginx), or Ray's token with --set global.rayAuth.tokenSecret=<Secret>, or --set raycluster.ingress.accessControl.enforcedExternally=true, or accept the risk with --set raycluster.ingress.allowUnauthenticated=true" -}}
{{- if not $nginx -}}
{{- $fix = printf "restrict the %s's listener to your clients (e.g. an ALB listener ACL), then --set raycluster.ingress.accessControl.enforcedExternally=true; or set Ray's token with --set global.rayAuth.tokenSecret=<Secret>; or accept the risk with --set raycluster.ingress.allowUnauthenticated=true" (ternary "ALB" "load balancer" (eq $ingress.provider "alb")) -}}
{{- end -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.ingress.enabled" "value" true "problem" (printf "exposes the Ray dashboard, which runs any job it is sent, without an access control%s" (ternary "" (printf " (with provider %s the chart cannot set one)" $ingress.provider) $nginx)) "fix" $fix) -}}
{{- end -}}
{{- if and .Values.networkPolicy.enabled (not .Values.networkPolicy.dashboardFrom) (not .Values.networkPolicy.dashboardFromAnywhere) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.networkPolicy.dashboardFrom" "value" "[]" "problem" "is empty while the Ingress is on: any pod could reach the dashboard port directly, past the Ingress's access control" "fix" (printf "name the ingress controller's peers, e.g. %s, or accept it with --set raycluster.networkPolicy.dashboardFromAnywhere=true" (ternary "--set-json 'raycluster.networkPolicy.dashboardFrom=[{\"namespaceSelector\":{\"matchLabels\":{\"kubernetes.io/metadata.name\":\"ingress-nginx\"}}}]'" "--set-json 'raycluster.networkPolicy.dashboardFrom=[{\"ipBlock\":{\"cidr\":\"<the load balancer's subnet>\"}}]'" $nginx))) -}}
{{- end -}}
{{- end -}}
{{- include "raycluster.rules.networkPolicyPeers" . -}}
{{- end -}}

{{/* The access controls in effect on the dashboard Ingress (JSON list), any one enough. Call with the values. */}}
{{- define "raycluster.ingressAccessControls" -}}
{{- $ingress := .ingress -}}
{{- $access := $ingress.accessControl -}}
{{- $controls := list -}}
{{- if eq $ingress.provider "nginx" -}}
{{- range $access.sourceRanges }}{{ if not (hasSuffix "/0" .) }}{{ $controls = append $controls "sourceRanges" }}{{ end }}{{ end -}}
{{- if $access.basicAuthSecret }}{{ $controls = append $controls "basicAuthSecret" }}{{ end -}}
{{- end -}}
{{- if $access.enforcedExternally }}{{ $controls = append $controls "enforcedExternally" }}{{ end -}}
{{- if $ingress.allowUnauthenticated }}{{ $controls = append $controls "allowUnauthenticated" }}{{ end -}}
{{- /* Ray's token: the dashboard itself refuses a request without it. */ -}}
{{- if ((.global.rayAuth | default dict).tokenSecret) }}{{ $controls = append $controls "rayAuth" }}{{ end -}}
{{- toJson (uniq $controls) -}}
{{- end -}}

{{/* The NetworkPolicy's peers: none empty (the API refuses one), and the dashboard's open to every namespace or
     address only with the dashboardFromAnywhere opt-in. */}}
{{- define "raycluster.rules.networkPolicyPeers" -}}
{{- $policy := .Values.networkPolicy -}}
{{- range $list := list "metricsFrom" "dashboardFrom" -}}
{{- range $index, $peer := get $policy $list -}}
{{- $field := printf "raycluster.networkPolicy.%s[%d]" $list $index -}}
{{- if not (or (hasKey $peer "podSelector") (hasKey $peer "namespaceSelector") (hasKey $peer "ipBlock")) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" (toJson $peer) "problem" "names no peer: the API refuses an empty NetworkPolicy peer" "fix" (printf "give it a podSelector, namespaceSelector or ipBlock, or remove it%s" (ternary " (an empty metricsFrom admits every scraper)" "" (eq $list "metricsFrom")))) -}}
{{- else if and (eq $list "dashboardFrom") (not $policy.dashboardFromAnywhere) (include "raycluster.peerAdmitsEveryone" $peer) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" (toJson $peer) "problem" "admits every namespace (an empty selector or a /0 block): any pod or address could reach the dashboard port, past the Ingress's access control" "fix" "name the ingress controller's namespace, e.g. {\"namespaceSelector\":{\"matchLabels\":{\"kubernetes.io/metadata.name\":\"ingress-nginx\"}}}, or opt in with --set raycluster.networkPolicy.dashboardFromAnywhere=true") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "true" when a NetworkPolicy peer admits every namespace: a namespaceSelector that selects all of them
     (a pod label narrowing it is no bound: anyone who may create a pod in any namespace sets it), or an ipBlock of /0. */}}
{{- define "raycluster.peerAdmitsEveryone" -}}
{{- $namespaces := .namespaceSelector | default dict -}}
{{- $everyNamespace := and (hasKey . "namespaceSelector") (not (or $namespaces.matchLabels $namespaces.matchExpressions)) -}}
{{- if or $everyNamespace (and .ipBlock (hasSuffix "/0" (toString .ipBlock.cidr))) -}}true{{- end -}}
{{- end -}}

{{/* The TensorBoard path needs TensorBoard and the dashboard Ingress; an OTLP endpoint needs the hook. */}}
{{- define "raycluster.rules.observability" -}}
{{- $path := .Values.global.tensorboard.ingressPath -}}
{{- if $path -}}
{{- if not .Values.global.tensorboard.enabled -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" "routes to TensorBoard, which is off" "fix" "--set global.tensorboard.enabled=true, or --set global.tensorboard.ingressPath=''") -}}
{{- end -}}
{{- if not .Values.ingress.enabled -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" "is a path on the dashboard Ingress, which is off" "fix" "--set raycluster.ingress.enabled=true (with an access control), or --set global.tensorboard.ingressPath=''") -}}
{{- else if eq (trimSuffix "/" $path) (trimSuffix "/" .Values.ingress.path) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" "is the Ray dashboard's own path (raycluster.ingress.path)" "fix" "use another path, e.g. --set global.tensorboard.ingressPath=/tensorboard") -}}
{{- end -}}
{{- end -}}
{{- $hook := .Values.tracing.startupHook -}}
{{- if and $hook.otlpEndpoint (not $hook.enabled) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.tracing.startupHook.otlpEndpoint" "value" $hook.otlpEndpoint "problem" "is used only by the tracing startup hook, which is off" "fix" "--set raycluster.tracing.startupHook.enabled=true, or --set raycluster.tracing.startupHook.otlpEndpoint=''") -}}
{{- end -}}
{{- end -}}

{{/* The Ray pods' environment: credentials only from Secrets, and every variable the chart sets (raycluster.ownedEnv:
     PYTHONPATH with the image's code and the tracing hook, observability, NCCL, credentials) kept as the chart sets it. */}}
{{- define "raycluster.rules.env" -}}
{{- $owned := include "raycluster.ownedEnv" . | fromJson -}}
{{- range $list, $items := dict "env" .Values.env "head.env" .Values.head.env "worker.env" .Values.worker.env -}}
{{- range $index, $item := $items -}}
{{- $field := printf "raycluster.%s[%d]" $list $index -}}
{{- if and (hasKey $item "value") (or (include "verl-ppo.looksLikeCredential" $item.name) (include "verl-ppo.looksLikeCredentialValue" $item.value)) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $item.name "problem" "is a credential as a literal value: it would be stored in plain text in the RayCluster" "fix" (printf "use extraSecretEnv: kubectl create secret generic <name> --from-literal=value=...; then --set raycluster.extraSecretEnv.%s.secretName=<name> --set raycluster.extraSecretEnv.%s.key=value (or raycluster.credentials.wandb / .huggingface)" $item.name $item.name)) -}}
{{- end -}}
{{- if hasKey $owned $item.name -}}
{{- include "raycluster.rules.ownedEnv" (dict "state" $.state "field" $field "name" $item.name "setBy" (get $owned $item.name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $name, $_ := .Values.extraSecretEnv -}}
{{- if hasKey $owned $name -}}
{{- include "raycluster.rules.ownedEnv" (dict "state" $.state "field" (printf "raycluster.extraSecretEnv.%s" $name) "name" $name "setBy" (get $owned $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* One variable from values that would replace one the chart sets: (dict "state" "field" "name" "setBy"). */}}
{{- define "raycluster.rules.ownedEnv" -}}
{{- $fix := printf "remove it and set %s instead" .setBy -}}
{{- if eq .name "PYTHONPATH" }}{{ $fix = "remove it and --set raycluster.pythonPath=<your directories, colon-separated> instead" }}{{ end -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" .name "problem" (printf "would replace the %s the chart sets on the Ray pods (from %s)" .name .setBy) "fix" $fix) -}}
{{- end -}}

{{/* Kueue's own refusals of a queued RayCluster or RayJob, and a release larger than its ClusterQueue's whole GPU
     quota (read from the cluster with lookup on install and upgrade; helm template has no cluster and skips it). */}}
{{- define "raycluster.rules.queue" -}}
{{- $q := .Values.queue -}}
{{- if and $q.workloadPriorityClass (not $q.kueue) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.queue.workloadPriorityClass" "value" $q.workloadPriorityClass "problem" "is a Kueue priority, but no Kueue queue is set" "fix" "--set raycluster.queue.kueue=<LocalQueue>, or --set raycluster.queue.workloadPriorityClass=''") -}}
{{- end -}}
{{- if and $q.elastic (not (include "raycluster.elasticQueue" .)) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.queue.elastic" "value" true "problem" "is Kueue's elastic admission of an autoscaling RayCluster: it needs raycluster.queue.kueue and raycluster.worker.autoscaling.enabled, in RayCluster mode" "fix" "--set raycluster.queue.kueue=<LocalQueue> --set raycluster.worker.autoscaling.enabled=true (global.mode=RayCluster), or --set raycluster.queue.elastic=false") -}}
{{- end -}}
{{- with $q.kueue -}}
{{- if and $.Values.worker.autoscaling.enabled (not (include "raycluster.elasticQueue" $)) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.worker.autoscaling.enabled" "value" true "problem" "is refused by Kueue for a queued cluster unless it is admitted elastically: it admits a fixed size" "fix" "--set raycluster.queue.elastic=true (Kueue 0.18 or later, RayCluster mode), or --set raycluster.worker.autoscaling.enabled=false, or --set raycluster.queue.kueue=''") -}}
{{- end -}}
{{- if eq $.Values.worker.groupName "head" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.worker.groupName" "value" "head" "problem" "is the name Kueue reserves for the head's pod set" "fix" "--set raycluster.worker.groupName=workergroup") -}}
{{- end -}}
{{- include "raycluster.rules.queueQuota" (dict "state" $.state "Values" $.Values "Release" $.Release "queue" .) -}}
{{- end -}}
{{- end -}}

{{- define "raycluster.rules.queueQuota" -}}
{{- $localQueue := lookup "kueue.x-k8s.io/v1beta2" "LocalQueue" .Release.Namespace .queue -}}
{{- with $localQueue -}}
{{- $clusterQueue := lookup "kueue.x-k8s.io/v1beta2" "ClusterQueue" "" .spec.clusterQueue -}}
{{- /* A ClusterQueue in a cohort may borrow beyond its own quota: only a lone one has a hard ceiling. */ -}}
{{- if and $clusterQueue (not $clusterQueue.spec.cohortName) -}}
{{- $quota := include "raycluster.queueGpuQuota" (dict "clusterQueue" $clusterQueue "resource" $.Values.global.gpu.resourceName) | int -}}
{{- $gpus := include "verl-ppo.totalGpus" $ | int -}}
{{- if gt $gpus $quota -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.queue.kueue" "value" $.queue "problem" (printf "leads to ClusterQueue %s, whose whole quota is %d %s: this release needs %d (global.gpu.nodes x global.gpu.perNode), so Kueue would never admit it and it would wait forever" $clusterQueue.metadata.name $quota $.Values.global.gpu.resourceName $gpus) "fix" "fit the quota (e.g. fewer global.gpu.nodes), ask for a larger quota, or name another LocalQueue: --set raycluster.queue.kueue=<LocalQueue>") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* GPUs a ClusterQueue may ever admit: the nominal quota of the GPU resource over all its flavors. */}}
{{- define "raycluster.queueGpuQuota" -}}
{{- $total := 0 -}}
{{- range .clusterQueue.spec.resourceGroups -}}
{{- range .flavors -}}
{{- range .resources -}}
{{- if eq .name $.resource }}{{ $total = add $total (div (include "verl-ppo.cpuMillis" .nominalQuota | int64) 1000) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* GCS fault tolerance needs its Redis, and the Redis password comes only from a Secret (never the ray start line). */}}
{{- define "raycluster.rules.gcsFaultTolerance" -}}
{{- $ft := .Values.gcsFaultTolerance -}}
{{- if and $ft.enabled (not $ft.redisAddress) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.gcsFaultTolerance.redisAddress" "value" "" "problem" "is empty: GCS fault tolerance keeps the cluster's state in an external Redis" "fix" "--set raycluster.gcsFaultTolerance.redisAddress=<host:port of your Redis>, or --set raycluster.gcsFaultTolerance.enabled=false") -}}
{{- end -}}
{{- range $role := list "head" "worker" -}}
{{- if hasKey ((get $.Values $role).rayStartParams | default dict) "redis-password" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "raycluster.%s.rayStartParams.redis-password" $role) "value" "<hidden>" "problem" "puts the Redis password on the ray start line, in plain text in the RayCluster" "fix" (printf "kubectl create secret generic <name> --from-literal=password=...; then --set raycluster.gcsFaultTolerance.passwordSecret.secretName=<name> and remove raycluster.%s.rayStartParams.redis-password" $role)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Ray's token needs a Ray that has it: KubeRay refuses authOptions without spec.rayVersion 2.52.0 or later. */}}
{{- define "raycluster.rules.rayAuth" -}}
{{- with include "verl-ppo.rayAuthSecret" . -}}
{{- $version := $.Values.rayVersion | default "" -}}
{{- if not (and (regexMatch "^[0-9]+\\.[0-9]+\\.[0-9]+" $version) (semverCompare ">=2.52.0-0" (regexFind "^[0-9]+\\.[0-9]+\\.[0-9]+" $version))) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.rayVersion" "value" $version "problem" (printf "must name a Ray of 2.52.0 or later with global.rayAuth.tokenSecret=%s: KubeRay checks it before it turns Ray's token authentication on, and refuses the cluster otherwise" .) "fix" "--set raycluster.rayVersion=<the image's Ray version, 2.52.0 or later>, or --set global.rayAuth.tokenSecret=''") -}}
{{- end -}}
{{- /* Ray reads the Authorization header before its own X-Ray-Authorization: basic auth's credentials, which nginx
       passes on, would be taken for a token and refused. */ -}}
{{- with and $.Values.ingress.enabled $.Values.ingress.accessControl.basicAuthSecret -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.ingress.accessControl.basicAuthSecret" "value" . "problem" "sends its credentials to the dashboard in the Authorization header, which Ray reads before its token header: with global.rayAuth.tokenSecret every request through the Ingress would be refused (403)" "fix" "drop basic auth (--set raycluster.ingress.accessControl.basicAuthSecret=''): Ray's token is the Ingress's access control, sourceRanges may stay; or --set global.rayAuth.tokenSecret='' to keep basic auth") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* An upgrade of a running queued release: Kueue (v0.18 and later, ValidateRayAndSparkJobUpdates) refuses to change
     or remove the queue label of a workload that is not suspended, and to remove its priority class at any time. The
     live object is read with lookup at install and upgrade (helm template and --dry-run without a cluster see none),
     so the refusal comes before Helm changes anything, naming the value to keep. */}}
{{- define "raycluster.rules.queueUpgrade" -}}
{{- $kind := ternary "RayJob" "RayCluster" (eq (include "verl-ppo.rayJobMode" .) "true") -}}
{{- $live := lookup "ray.io/v1" $kind .Release.Namespace (include "verl-ppo.clusterName" .) -}}
{{- with $live -}}
{{- $labels := .metadata.labels | default dict -}}
{{- $liveQueue := get $labels "kueue.x-k8s.io/queue-name" -}}
{{- $livePriority := get $labels "kueue.x-k8s.io/priority-class" -}}
{{- $running := not (.spec.suspend | default false) -}}
{{- $q := $.Values.queue -}}
{{- /* A "default" label with no value set may be Kueue's own (its webhook names the namespace's default LocalQueue and
       the default WorkloadPriorityClass, both "default"): Helm leaves a label it never rendered alone. */ -}}
{{- $kueueDefault := and (not $q.kueue) (eq $liveQueue "default") -}}
{{- if and $liveQueue $running (ne $liveQueue ($q.kueue | default "")) (not $kueueDefault) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.queue.kueue" "value" ($q.kueue | default "") "problem" (printf "would change the queue of the running %s %s, admitted through LocalQueue %s: Kueue refuses to change or remove the queue label of a workload that is not suspended" $kind .metadata.name $liveQueue) "fix" (printf "keep --set raycluster.queue.kueue=%s for this run, or end the run first (helm uninstall, or kubectl patch %s %s --type merge -p '{\"spec\":{\"suspend\":true}}') and then change the queue" $liveQueue (lower $kind) .metadata.name)) -}}
{{- end -}}
{{- $liveElastic := eq (get (.metadata.annotations | default dict) "kueue.x-k8s.io/elastic-job") "true" -}}
{{- if and $liveQueue (ne $liveElastic (eq (include "raycluster.elasticQueue" $) "true")) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.queue.elastic" "value" (not $liveElastic) "problem" (printf "would switch Kueue's elastic admission of the %s %s: Kueue refuses to change it on an existing workload" $kind .metadata.name) "fix" (printf "keep raycluster.queue.elastic=%t (and what it needs: queue.kueue, worker.autoscaling.enabled) for this cluster, or uninstall the release first" $liveElastic)) -}}
{{- end -}}
{{- if and $livePriority (not $q.workloadPriorityClass) (ne $livePriority "default") -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.queue.workloadPriorityClass" "value" "" "problem" (printf "would remove the priority class %s of the %s %s: Kueue refuses to remove a workload's priority class" $livePriority $kind .metadata.name) "fix" (printf "keep --set raycluster.queue.workloadPriorityClass=%s, or uninstall the release first" $livePriority)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
