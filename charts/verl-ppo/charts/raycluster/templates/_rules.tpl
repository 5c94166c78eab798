{{/* The raycluster component's rules (called by verl-ppo.validate): pods that fit their nodes, the
     workers training needs, no door to the dashboard (which runs any code it is sent) without a lock, and
     what Kueue refuses. */}}
{{- define "raycluster.rules" -}}
{{- include "raycluster.rules.autoscalingRange" . -}}
{{- include "raycluster.rules.podsFit" . -}}
{{- include "raycluster.rules.exposure" . -}}
{{- include "raycluster.rules.tensorboardPathOff" . -}}
{{- include "raycluster.rules.tensorboardPathWithoutIngress" . -}}
{{- include "raycluster.rules.tensorboardPathIsDashboard" . -}}
{{- include "raycluster.rules.tensorboardPathUnguarded" . -}}
{{- include "raycluster.rules.tensorboardOptInWithoutPath" . -}}
{{- include "raycluster.rules.otlpWithoutHook" . -}}
{{- include "raycluster.rules.env" . -}}
{{- include "raycluster.rules.priorityWithoutQueue" . -}}
{{- include "raycluster.rules.elasticNeeds" . -}}
{{- include "raycluster.rules.autoscalingQueued" . -}}
{{- include "raycluster.rules.groupNameHead" . -}}
{{- include "raycluster.rules.queueQuota" . -}}
{{- include "raycluster.rules.redisAddress" . -}}
{{- include "raycluster.rules.redisPassword" . -}}
{{- include "raycluster.rules.sideResources" . -}}
{{- include "raycluster.rules.rayAuthVersion" . -}}
{{- include "raycluster.rules.rayAuthBasicAuth" . -}}
{{- include "raycluster.rules.queueUpgrade" . -}}
{{- include "raycluster.rules.ncclName" . -}}
{{- include "raycluster.rules.gpusPerNode" . -}}
{{- include "raycluster.rules.poolGpusPerNode" . -}}
{{- include "raycluster.rules.rolloutSidecarQos" . -}}
{{- include "raycluster.rules.operatorInRayClusterMode" . -}}
{{- include "raycluster.rules.poolSharesNodes" . -}}
{{- include "raycluster.rules.poolGroupName" . -}}
{{- include "raycluster.rules.poolSettingsWithoutPool" . -}}
{{- include "raycluster.rules.gracePeriodRemoved" . -}}
{{- end -}}

{{/* The rollout pool's worker group needs a name of its own: KubeRay tells groups apart by name (ray.io/group), and Kueue
     reserves "head" for the head's pod set. */}}
{{- define "raycluster.rules.poolGroupName" -}}
{{- $name := .Values.rolloutPool.groupName -}}
{{- if and (include "verl-ppo.rolloutPoolEnabled" .) (or (eq $name .Values.worker.groupName) (and .Values.queue.kueue (eq $name "head"))) -}}
{{- $problem := ternary "is the training workers' group name (raycluster.worker.groupName): KubeRay tells worker groups apart by name"
  "is the name Kueue reserves for the head's pod set" (eq $name .Values.worker.groupName) -}}
{{- $fix := "--set raycluster.rolloutPool.groupName=<a name of its own, e.g. rolloutpool>" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.rolloutPool.groupName" "value" $name "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The rollout pool's settings with no pool (global.rolloutPool.enabled false) would be ignored without a word. */}}
{{- define "raycluster.rules.poolSettingsWithoutPool" -}}
{{- if not (include "verl-ppo.rolloutPoolEnabled" .) -}}
{{- $pool := .Values.rolloutPool -}}
{{- $set := dict "global.rolloutPool.perNode" (.Values.global.rolloutPool | default dict).perNode -}}
{{- /* Every key of the pool's values but its group's name, which has a default of its own. */}}
{{- range $key, $value := $pool -}}
{{- if ne $key "groupName" }}{{ $_ := set $set (printf "raycluster.rolloutPool.%s" $key) $value }}{{ end -}}
{{- end -}}
{{- range $field := keys $set | sortAlpha -}}
{{- $value := get $set $field -}}
{{- if not (empty $value) -}}
{{- $problem := "is set while global.rolloutPool.enabled is false: no rollout pool runs, so it would be ignored" -}}
{{- $fix := printf "--set global.rolloutPool.enabled=true --set ppo-job.trainer.mode=separate_async, or remove %s" $field -}}
{{- $shown := ternary (toJson $value) (toString $value) (or (kindIs "map" $value) (kindIs "slice" $value)) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $shown "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A null grace period deletes the chart's default (Helm drops null keys): the Ray pods would get none (0 s) and
     Ray's drain a negative time. */}}
{{- define "raycluster.rules.gracePeriodRemoved" -}}
{{- if not (hasKey .Values "terminationGracePeriodSeconds") -}}
{{- $problem := "removes the Ray pods' grace period (Helm drops a null key): they would be killed at once, without Ray's drain" -}}
{{- /* The default and the bounds are values.yaml's and the schema's, named there only. */}}
{{- $fix := "leave the key out for the chart's default, or --set raycluster.terminationGracePeriodSeconds=<whole seconds within the schema's bounds>" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.terminationGracePeriodSeconds" "value" "null" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The rollout pool on the training nodes' node type (the same node selector) must take whole nodes as the training pods
     do: more GPUs than a node has never schedule; fewer leave the rest of its node to no one, as a training pod needs all. */}}
{{- define "raycluster.rules.poolSharesNodes" -}}
{{- if include "verl-ppo.rolloutPoolEnabled" . -}}
{{- $place := include "raycluster.rolloutPoolPlacement" . | fromJson -}}
{{- $perNode := include "verl-ppo.rolloutPoolGpusPerNode" . | int -}}
{{- $training := include "verl-ppo.gpusPerNode" . | int -}}
{{- if and (deepEqual ($place.nodeSelector | default dict) (.Values.nodeSelector | default dict)) (ne $perNode $training) -}}
{{- $problem := printf "asks %d GPUs of each pool node, on the training nodes' node type (the same node selector) of %d GPUs:"
  $perNode $training -}}
{{- $idle := "a pool pod would leave the rest of its node idle, as a training pod takes a whole node" -}}
{{- $problem = cat $problem (ternary "its pods would never schedule" $idle (gt $perNode $training)) -}}
{{- $fix := cat (printf "--set global.rolloutPool.perNode=%d, or give the pool its own node type:" $training)
  "--set raycluster.rolloutPool.nodeSelector.<label>=<value>" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.rolloutPool.perNode" "value" $perNode "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The autoscaler's range contains the workers training needs. */}}
{{- define "raycluster.rules.autoscalingRange" -}}
{{- $v := .Values -}}
{{- $workers := include "verl-ppo.workerReplicas" (dict "Values" $v "trainsOnHead" $v.head.trainsOnHead) | int -}}
{{- $autoscaling := $v.worker.autoscaling -}}
{{- if and $autoscaling.enabled (or (gt (int $autoscaling.minReplicas) $workers) (lt (int $autoscaling.maxReplicas) $workers)) -}}
{{- $range := printf "min %d, max %d" (int $autoscaling.minReplicas) (int $autoscaling.maxReplicas) -}}
{{- $problem := printf "does not contain the %d workers training needs (global.gpu.nodes)" $workers -}}
{{- $fix := printf "--set raycluster.worker.autoscaling.minReplicas=%d (or less) --set raycluster.worker.autoscaling.maxReplicas=%d (or more)"
  $workers $workers -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.worker.autoscaling" "value" $range "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Each Ray pod fits the allocatable CPU and memory of the GPU node type the values were made for: the head's and the
     workers' raycluster.gpuShape, the rollout pool's its own (raycluster.rolloutPool.gpuShape, null: the training one's),
     with its own resources or the workers' it takes where they are null. */}}
{{- define "raycluster.rules.podsFit" -}}
{{- range $role := list "head" "worker" -}}
{{- $pod := dict "state" $.state "shape" $.Values.gpuShape "shapeField" "raycluster.gpuShape" "resources" (get $.Values $role).resources
  "field" (printf "raycluster.%s.resources" $role) -}}
{{- include "raycluster.rules.cpuFits" $pod -}}
{{- include "raycluster.rules.memoryFits" $pod -}}
{{- end -}}
{{- if include "verl-ppo.rolloutPoolEnabled" . -}}
{{- $pool := .Values.rolloutPool -}}
{{- $shapeField := ternary "raycluster.gpuShape" "raycluster.rolloutPool.gpuShape" (kindIs "invalid" $pool.gpuShape) -}}
{{- $pod := dict "state" .state "shape" ($pool.gpuShape | default .Values.gpuShape) "shapeField" $shapeField
  "resources" ($pool.resources | default .Values.worker.resources) "field" "raycluster.rolloutPool.resources" -}}
{{- include "raycluster.rules.cpuFits" $pod -}}
{{- include "raycluster.rules.memoryFits" $pod -}}
{{- end -}}
{{- end -}}

{{/* One Ray pod's CPU fits its node: (dict "state" "shape" "shapeField" "resources" "field"). */}}
{{- define "raycluster.rules.cpuFits" -}}
{{- $shape := .shape -}}
{{- $cpu := .resources.cpu -}}
{{- if gt (include "verl-ppo.cpuMillis" $cpu | int64) (include "verl-ppo.cpuMillis" $shape.allocatable.cpu | int64) -}}
{{- $problem := printf "does not fit the %v allocatable CPU of a %s node (%s.allocatable.cpu)" $shape.allocatable.cpu $shape.name .shapeField -}}
{{- $fix := printf "--set %s.cpu=<at most %v>; the generator uses 80%% of allocatable" .field $shape.allocatable.cpu -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%s.cpu" .field) "value" $cpu "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* One Ray pod's memory fits its node: (dict "state" "shape" "shapeField" "resources" "field"). */}}
{{- define "raycluster.rules.memoryFits" -}}
{{- $shape := .shape -}}
{{- $memory := .resources.memory -}}
{{- if gt (include "verl-ppo.memoryMiB" $memory | int64) (include "verl-ppo.memoryMiB" $shape.allocatable.memory | int64) -}}
{{- $problem := printf "does not fit the %v allocatable memory of a %s node (%s.allocatable.memory)"
  $shape.allocatable.memory $shape.name .shapeField -}}
{{- $fix := printf "--set %s.memory=<at most %v>; the generator uses 80%% of allocatable" .field $shape.allocatable.memory -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%s.memory" .field) "value" $memory "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The head Service and the dashboard Ingress: exposure needs an explicit choice and an access control. Each
     rule on its own: a first install hears of every one it breaks (an ALB needs its listener restricted and the
     NetworkPolicy's peers named, together). */}}
{{- define "raycluster.rules.exposure" -}}
{{- include "raycluster.rules.serviceType" . -}}
{{- include "raycluster.rules.sourceRangesOpen" . -}}
{{- include "raycluster.rules.ingressAnnotations" . -}}
{{- include "raycluster.rules.accessControlProvider" . -}}
{{- include "raycluster.rules.ingressAccessControl" . -}}
{{- include "raycluster.rules.dashboardFromMissing" . -}}
{{- include "raycluster.rules.networkPolicyPeers" . -}}
{{- include "raycluster.rules.kubeRayOperatorFound" . -}}
{{- end -}}

{{/* The head Service publishes the dashboard and client ports outside the cluster only by an explicit choice, or
     behind Ray's token, which Ray checks on each of them (dashboard, GCS, client). */}}
{{- define "raycluster.rules.serviceType" -}}
{{- $head := .Values.head -}}
{{- if and (ne $head.serviceType "ClusterIP") (not $head.allowUnauthenticatedService) (not (include "verl-ppo.rayAuthSecret" .)) -}}
{{- $problem := cat "publishes the Ray dashboard and client ports, which run any code they are sent,"
  "outside the cluster without an access control" -}}
{{- $fix := cat "keep ClusterIP and expose the dashboard through raycluster.ingress with an access control,"
  "or set Ray's token (--set global.rayAuth.tokenSecret=<Secret>), which Ray checks on the dashboard, GCS and client ports,"
  "or accept the risk with --set raycluster.head.allowUnauthenticatedService=true" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.head.serviceType" "value" $head.serviceType "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A source range of /0 admits every address: it is no access control. */}}
{{- define "raycluster.rules.sourceRangesOpen" -}}
{{- if .Values.ingress.enabled -}}
{{- range .Values.ingress.accessControl.sourceRanges -}}
{{- if hasSuffix "/0" . -}}
{{- $problem := "admits every address: it is not an access control" -}}
{{- $fix := "name the clients' networks, e.g. --set raycluster.ingress.accessControl.sourceRanges={10.0.0.0/8}" -}}
{{- $field := "raycluster.ingress.accessControl.sourceRanges" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" . "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The user's Ingress annotations cannot replace the access control the chart sets. */}}
{{- define "raycluster.rules.ingressAnnotations" -}}
{{- $ingress := .Values.ingress -}}
{{- if $ingress.enabled -}}
{{- $chartAnnotations := include "raycluster.ingressAnnotations" (dict "Values" .Values) | fromJson -}}
{{- $accessAnnotations := list "nginx.ingress.kubernetes.io/whitelist-source-range" "nginx.ingress.kubernetes.io/satisfy"
  "nginx.ingress.kubernetes.io/auth-type" "nginx.ingress.kubernetes.io/auth-secret" "nginx.ingress.kubernetes.io/auth-url" -}}
{{- range $key, $_ := $ingress.annotations -}}
{{- if or (hasKey $chartAnnotations $key) (has $key $accessAnnotations) -}}
{{- $problem := "would replace the access control the chart sets from ingress.accessControl" -}}
{{- $fix := cat "remove it and set raycluster.ingress.accessControl (sourceRanges, basicAuthSecret),"
  "or enforce access outside the chart with --set raycluster.ingress.accessControl.enforcedExternally=true" -}}
{{- $field := printf "raycluster.ingress.annotations.%s" $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" (get $ingress.annotations $key) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* sourceRanges and basicAuthSecret become nginx annotations: another provider never sees them. */}}
{{- define "raycluster.rules.accessControlProvider" -}}
{{- $ingress := .Values.ingress -}}
{{- $access := $ingress.accessControl -}}
{{- if and $ingress.enabled (ne $ingress.provider "nginx") (or $access.sourceRanges $access.basicAuthSecret) -}}
{{- $problem := "sourceRanges and basicAuthSecret are applied through nginx annotations only" -}}
{{- $fix := cat "with provider alb or other, restrict access on the load balancer (e.g. an ALB listener ACL)"
  "and --set raycluster.ingress.accessControl.enforcedExternally=true" -}}
{{- $field := "raycluster.ingress.accessControl" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" $ingress.provider "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The dashboard runs any job it is sent: its Ingress needs an access control, or the opt-in. */}}
{{- define "raycluster.rules.ingressAccessControl" -}}
{{- $ingress := .Values.ingress -}}
{{- if and $ingress.enabled (not (include "raycluster.ingressAccessControls" .Values | fromJsonArray)) -}}
{{- $nginx := eq $ingress.provider "nginx" -}}
{{- $problem := printf "exposes the Ray dashboard, which runs any job it is sent, without an access control%s"
  (ternary "" (printf " (with provider %s the chart cannot set one)" $ingress.provider) $nginx) -}}
{{- $fix := cat "set raycluster.ingress.accessControl.sourceRanges or .basicAuthSecret (nginx),"
  "or Ray's token with --set global.rayAuth.tokenSecret=<Secret>,"
  "or --set raycluster.ingress.accessControl.enforcedExternally=true,"
  "or accept the risk with --set raycluster.ingress.allowUnauthenticated=true" -}}
{{- if not $nginx -}}
{{- $balancer := ternary "ALB" "load balancer" (eq $ingress.provider "alb") -}}
{{- $fix = cat (printf "restrict the %s's listener to your clients (e.g. an ALB listener ACL)," $balancer)
  "then --set raycluster.ingress.accessControl.enforcedExternally=true;"
  "or set Ray's token with --set global.rayAuth.tokenSecret=<Secret>;"
  "or accept the risk with --set raycluster.ingress.allowUnauthenticated=true" -}}
{{- end -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.ingress.enabled" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* With the NetworkPolicy on, the dashboard port admits only the Ingress controller's peers, named. */}}
{{- define "raycluster.rules.dashboardFromMissing" -}}
{{- $policy := .Values.networkPolicy -}}
{{- if and .Values.ingress.enabled $policy.enabled (not $policy.dashboardFrom) (not $policy.dashboardFromAnywhere) -}}
{{- $problem := cat "is empty while the Ingress is on: any pod could reach the dashboard port directly,"
  "past the Ingress's access control" -}}
{{- $peers := "[{\"ipBlock\":{\"cidr\":\"<the load balancer's subnet>\"}}]" -}}
{{- if eq .Values.ingress.provider "nginx" -}}
{{- $peers = "[{\"namespaceSelector\":{\"matchLabels\":{\"kubernetes.io/metadata.name\":\"ingress-nginx\"}}}]" -}}
{{- end -}}
{{- $fix := cat (printf "name the ingress controller's peers, e.g. --set-json 'raycluster.networkPolicy.dashboardFrom=%s'," $peers)
  "or accept it with --set raycluster.networkPolicy.dashboardFromAnywhere=true" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.networkPolicy.dashboardFrom" "value" "[]" "problem" $problem "fix" $fix) -}}
{{- end -}}
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
     address only with the dashboardFromAnywhere opt-in, each peer on its own and the address blocks together. */}}
{{- define "raycluster.rules.networkPolicyPeers" -}}
{{- range $list := list "metricsFrom" "dashboardFrom" -}}
{{- range $index, $peer := get $.Values.networkPolicy $list -}}
{{- $item := dict "state" $.state "Values" $.Values "list" $list "peer" $peer "field" (printf "raycluster.networkPolicy.%s[%d]" $list $index) -}}
{{- include "raycluster.rules.peerEmpty" $item -}}
{{- include "raycluster.rules.peerAdmitsEveryone" $item -}}
{{- end -}}
{{- end -}}
{{- include "raycluster.rules.peerBlocksCoverEverything" . -}}
{{- end -}}

{{/* RayJob mode, the operator's namespace looked up: its labels on pods of one namespace only. Pods in several could
     include one posing as the operator (anyone who may create a pod sets its labels): the chart admits none of them. */}}
{{- define "raycluster.rules.kubeRayOperatorFound" -}}
{{- if and (include "verl-ppo.rayJobMode" .) .Values.networkPolicy.enabled (not .Values.networkPolicy.kubeRayOperator.namespace) -}}
{{- $found := include "raycluster.kubeRayOperatorNamespaces" . | fromJson -}}
{{- if gt (len $found.namespaces) 1 -}}
{{- $where := printf "%d namespaces (%s)" (len $found.namespaces) (join ", " $found.namespaces) -}}
{{- $problem := cat (printf "is empty and pods with the KubeRay operator's labels run in %s:" $where)
  "all but one pose as the operator, and the NetworkPolicy would admit each to the dashboard port, which runs any code it is sent" -}}
{{- $fix := "name the namespace of your KubeRay operator: --set raycluster.networkPolicy.kubeRayOperator.namespace=<it>" -}}
{{- $field := "raycluster.networkPolicy.kubeRayOperator.namespace" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" "" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The API refuses an empty NetworkPolicy peer: (dict "state" "Values" "list" "peer" "field"). */}}
{{- define "raycluster.rules.peerEmpty" -}}
{{- if not (or (hasKey .peer "podSelector") (hasKey .peer "namespaceSelector") (hasKey .peer "ipBlock")) -}}
{{- $problem := "names no peer: the API refuses an empty NetworkPolicy peer" -}}
{{- $fix := printf "give it a podSelector, namespaceSelector or ipBlock, or remove it%s"
  (ternary " (an empty metricsFrom admits every scraper)" "" (eq .list "metricsFrom")) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" (toJson .peer) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A dashboard peer admitting every namespace or address needs the opt-in: (dict "state" "Values" "list" "peer" "field").
     An empty peer admits none here: the rule above reports it. */}}
{{- define "raycluster.rules.peerAdmitsEveryone" -}}
{{- if and (eq .list "dashboardFrom") (not .Values.networkPolicy.dashboardFromAnywhere) (include "raycluster.peerAdmitsEveryone" .peer) -}}
{{- $problem := cat "admits every namespace or address (a namespace selector that every namespace meets, or a block of every address):"
  "any pod or address could reach the dashboard port, past the Ingress's access control" -}}
{{- $fix := cat "name the ingress controller's namespace,"
  "e.g. {\"namespaceSelector\":{\"matchLabels\":{\"kubernetes.io/metadata.name\":\"ingress-nginx\"}}},"
  "or opt in with --set raycluster.networkPolicy.dashboardFromAnywhere=true" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" (toJson .peer) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* "true" when a NetworkPolicy peer admits every namespace: a namespaceSelector that requires nothing every namespace
     lacks (a pod label narrowing it is no bound: anyone who may create a pod in any namespace sets it), or an ipBlock
     of every address. */}}
{{- define "raycluster.peerAdmitsEveryone" -}}
{{- if or (and (hasKey . "namespaceSelector") (include "raycluster.selectsEveryNamespace" .namespaceSelector))
  (and .ipBlock (include "raycluster.blocksCoverEverything" (list .ipBlock.cidr))) -}}true{{- end -}}
{{- end -}}

{{/* "true" when a namespace selector selects every namespace: it has no requirement that some namespace fails. Only
     a label value required (matchLabels, In) or a label required to exist narrows it, and not the name label
     kubernetes.io/metadata.name, which every namespace has; NotIn and DoesNotExist leave every other namespace in,
     a new one too. Call with the selector (a map, maybe nil). */}}
{{- define "raycluster.selectsEveryNamespace" -}}
{{- $selector := . | default dict -}}
{{- $narrows := not (empty $selector.matchLabels) -}}
{{- range $selector.matchExpressions | default list -}}
{{- if or (eq .operator "In") (and (eq .operator "Exists") (ne .key "kubernetes.io/metadata.name")) }}{{ $narrows = true }}{{ end -}}
{{- end -}}
{{- if not $narrows }}true{{ end -}}
{{- end -}}

{{/* Address blocks of dashboardFrom whose union is every address of a family (0.0.0.0/0 or ::/0), each block harmless
     alone: the same opening as one /0. */}}
{{- define "raycluster.rules.peerBlocksCoverEverything" -}}
{{- $cidrs := list -}}
{{- range .Values.networkPolicy.dashboardFrom }}{{ with .ipBlock }}{{ $cidrs = append $cidrs .cidr }}{{ end }}{{ end -}}
{{- $single := false -}}
{{- range $cidrs }}{{ if include "raycluster.blocksCoverEverything" (list .) }}{{ $single = true }}{{ end }}{{ end -}}
{{- if and (gt (len $cidrs) 1) (not $single) (not .Values.networkPolicy.dashboardFromAnywhere) -}}
{{- if include "raycluster.blocksCoverEverything" $cidrs -}}
{{- $problem := "holds address blocks whose union is every address (0.0.0.0/0 or ::/0): any address could reach the dashboard port" -}}
{{- $fix := cat "name the ingress controller's own addresses, e.g. {\"ipBlock\":{\"cidr\":\"10.0.0.0/16\"}},"
  "or opt in with --set raycluster.networkPolicy.dashboardFromAnywhere=true" -}}
{{- $field := "raycluster.networkPolicy.dashboardFrom" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" (join "," $cidrs) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "true" when the CIDRs (a list) together cover every IPv4 or every IPv6 address. Each block is a range of 32-bit
     words (one for IPv4, four for IPv6) printed as fixed-width text, so text order is address order; sorted by
     start, the blocks leave no gap from the family's first address past its last. */}}
{{- define "raycluster.blocksCoverEverything" -}}
{{- $covered := false -}}
{{- range $family := list 4 6 -}}
{{- $ranges := list -}}
{{- range $cidr := $ -}}
{{- $range := include "raycluster.cidrRange" $cidr | fromJson -}}
{{- if eq (int $range.family) $family }}{{ $ranges = append $ranges (printf "%s %s" $range.start $range.next) }}{{ end -}}
{{- end -}}
{{- $cursor := repeat (ternary 10 40 (eq $family 4)) "0" -}}
{{- $gap := false -}}
{{- range sortAlpha $ranges -}}
{{- $bounds := splitList " " . -}}
{{- if gt (first $bounds) $cursor }}{{ $gap = true }}{{ else if gt (last $bounds) $cursor }}{{ $cursor = last $bounds }}{{ end -}}
{{- end -}}
{{- if and $ranges (not $gap) (eq $cursor "end") }}{{ $covered = true }}{{ end -}}
{{- end -}}
{{- if $covered }}true{{ end -}}
{{- end -}}

{{/* One CIDR as a range (JSON): family 4 or 6, start (its first address) and next (the address after its last, or
     "end" past the family's last), each as 32-bit words of 10 digits; family 0 for text that is no CIDR (the
     schema refuses it). */}}
{{- define "raycluster.cidrRange" -}}
{{- $parts := splitList "/" (toString .) -}}
{{- $words := list -}}
{{- $family := 0 -}}
{{- if and (eq (len $parts) 2) (regexMatch "^[0-9]+$" (last $parts)) -}}
{{- $address := first $parts -}}
{{- if regexMatch "^[0-9]+([.][0-9]+){3}$" $address -}}
{{- $word := 0 -}}
{{- range splitList "." $address }}{{ $word = add (mul $word 256) (atoi .) }}{{ end -}}
{{- $words = list $word -}}
{{- $family = 4 -}}
{{- else if regexMatch "^[0-9a-fA-F:]+$" $address -}}
{{- $groups := include "raycluster.ipv6Groups" $address | fromJsonArray -}}
{{- if eq (len $groups) 8 -}}
{{- range $i := list 0 2 4 6 }}{{ $words = append $words (add (mul (index $groups $i) 65536) (index $groups (add $i 1))) }}{{ end -}}
{{- $family = 6 -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $family -}}
{{- $last := sub (len $words) 1 | int -}}
{{- $hostBits := sub (mul (len $words) 32) (atoi (last $parts)) | int -}}
{{- /* One block size, 2^hostBits, added to word $addAt (below 0 for a /0: past the last address). */ -}}
{{- $addAt := sub $last (div $hostBits 32) | int -}}
{{- $add := 1 -}}
{{- range until (mod $hostBits 32 | int) }}{{ $add = mul $add 2 }}{{ end -}}
{{- $start := list -}}
{{- $next := list -}}
{{- $carry := 0 -}}
{{- range $i := untilStep $last -1 -1 -}}
{{- $cleared := max 0 (min 32 (sub $hostBits (mul (sub $last $i) 32))) | int -}}
{{- $size := 1 -}}
{{- range until $cleared }}{{ $size = mul $size 2 }}{{ end -}}
{{- $word := mul (div (index $words $i) $size) $size -}}
{{- $start = prepend $start (printf "%010d" $word) -}}
{{- $sum := add $word (ternary $add 0 (eq $i $addAt)) $carry -}}
{{- $carry = div $sum 4294967296 -}}
{{- $next = prepend $next (printf "%010d" (mod $sum 4294967296)) -}}
{{- end -}}
{{- $end := ternary "end" (join "" $next) (or (lt $addAt 0) (gt (int $carry) 0)) -}}
{{- dict "family" $family "start" (join "" $start) "next" $end | toJson -}}
{{- else -}}
{{- dict "family" 0 | toJson -}}
{{- end -}}
{{- end -}}

{{/* An IPv6 address's eight 16-bit groups (JSON list of numbers), "::" filled in; fewer or more for text that is no
     address. Call with the address. */}}
{{- define "raycluster.ipv6Groups" -}}
{{- $halves := splitList "::" (lower .) -}}
{{- $sides := list -}}
{{- range $halves -}}
{{- $groups := list -}}
{{- range (ternary list (splitList ":" .) (eq . "")) -}}
{{- $value := 0 -}}
{{- /* A hexadecimal digit's value: how many digits precede it. */ -}}
{{- range splitList "" . }}{{ $value = add (mul $value 16) (len (first (splitList . "0123456789abcdef"))) }}{{ end -}}
{{- $groups = append $groups $value -}}
{{- end -}}
{{- $sides = append $sides $groups -}}
{{- end -}}
{{- $groups := first $sides -}}
{{- if eq (len $sides) 2 -}}
{{- $missing := sub 8 (add (len (first $sides)) (len (last $sides))) | int -}}
{{- if gt $missing 0 }}{{ range until $missing }}{{ $groups = append $groups 0 }}{{ end }}{{ $groups = concat $groups (last $sides) }}{{ end -}}
{{- end -}}
{{- toJson $groups -}}
{{- end -}}

{{/* The TensorBoard path routes to TensorBoard. */}}
{{- define "raycluster.rules.tensorboardPathOff" -}}
{{- $path := .Values.global.tensorboard.ingressPath -}}
{{- if and $path (not .Values.global.tensorboard.enabled) -}}
{{- $problem := "routes to TensorBoard, which is off" -}}
{{- $fix := "--set global.tensorboard.enabled=true, or --set global.tensorboard.ingressPath=''" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The TensorBoard path is a path on the dashboard Ingress. */}}
{{- define "raycluster.rules.tensorboardPathWithoutIngress" -}}
{{- $path := .Values.global.tensorboard.ingressPath -}}
{{- if and $path (not .Values.ingress.enabled) -}}
{{- $problem := "is a path on the dashboard Ingress, which is off" -}}
{{- $fix := "--set raycluster.ingress.enabled=true (with an access control), or --set global.tensorboard.ingressPath=''" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The TensorBoard path is not the dashboard's own. */}}
{{- define "raycluster.rules.tensorboardPathIsDashboard" -}}
{{- $path := .Values.global.tensorboard.ingressPath -}}
{{- if and $path .Values.ingress.enabled -}}
{{- if eq (trimSuffix "/" $path) (trimSuffix "/" .Values.ingress.path) -}}
{{- $problem := "is the Ray dashboard's own path (raycluster.ingress.path)" -}}
{{- $fix := "use another path, e.g. --set global.tensorboard.ingressPath=/tensorboard" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Ray's token guards Ray's dashboard alone: the TensorBoard path on the same Ingress needs an access control of the
     Ingress's own (any but the token), or its opt-in. */}}
{{- define "raycluster.rules.tensorboardPathUnguarded" -}}
{{- $tensorboard := .Values.global.tensorboard -}}
{{- $rayAuth := include "verl-ppo.rayAuthSecret" . -}}
{{- if and $rayAuth $tensorboard.ingressPath .Values.ingress.enabled (not $tensorboard.ingressAllowUnauthenticated) -}}
{{- /* Without the token, an Ingress with no control at all is raycluster.rules.ingressAccessControl's to report. */ -}}
{{- $controls := without (include "raycluster.ingressAccessControls" .Values | fromJsonArray) "rayAuth" -}}
{{- if not $controls -}}
{{- $problem := cat "publishes TensorBoard on the dashboard Ingress, whose only access control is Ray's token"
  "(global.rayAuth.tokenSecret): the token guards Ray's dashboard alone, so anyone who reaches the Ingress reads the training curves" -}}
{{- $fix := cat "give the Ingress an access control of its own (--set raycluster.ingress.accessControl.sourceRanges={10.0.0.0/8},"
  "or enforcedExternally=true with the load balancer restricted), or accept it with"
  "--set global.tensorboard.ingressAllowUnauthenticated=true, or --set global.tensorboard.ingressPath=''" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $tensorboard.ingressPath "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The TensorBoard path's opt-in means nothing without the path. */}}
{{- define "raycluster.rules.tensorboardOptInWithoutPath" -}}
{{- $tensorboard := .Values.global.tensorboard -}}
{{- if and $tensorboard.ingressAllowUnauthenticated (not $tensorboard.ingressPath) -}}
{{- $problem := "accepts TensorBoard's Ingress path without an access control, but global.tensorboard.ingressPath is empty" -}}
{{- $fix := "--set global.tensorboard.ingressPath=/tensorboard, or --set global.tensorboard.ingressAllowUnauthenticated=false" -}}
{{- $field := "global.tensorboard.ingressAllowUnauthenticated" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* An OTLP endpoint is read by the tracing startup hook only. */}}
{{- define "raycluster.rules.otlpWithoutHook" -}}
{{- $hook := .Values.tracing.startupHook -}}
{{- if and $hook.otlpEndpoint (not $hook.enabled) -}}
{{- $problem := "is used only by the tracing startup hook, which is off" -}}
{{- $fix := "--set raycluster.tracing.startupHook.enabled=true, or --set raycluster.tracing.startupHook.otlpEndpoint=''" -}}
{{- $field := "raycluster.tracing.startupHook.otlpEndpoint" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" $hook.otlpEndpoint "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The Ray pods' environment: credentials only from Secrets, and every variable the chart sets (raycluster.ownedEnv:
     PYTHONPATH with the image's code and the tracing hook, observability, NCCL, credentials) kept as the chart sets it. */}}
{{- define "raycluster.rules.env" -}}
{{- $owned := include "raycluster.ownedEnv" . | fromJson -}}
{{- include "raycluster.rules.envTwice" . -}}
{{- $lists := dict "env" .Values.env "head.env" .Values.head.env "worker.env" .Values.worker.env -}}
{{- /* The rollout pool's pods get its own NCCL variables where it has them (raycluster.rolloutPool.nccl). */ -}}
{{- $poolOwned := deepCopy $owned -}}
{{- if include "verl-ppo.rolloutPoolEnabled" . -}}
{{- $_ := set $lists "rolloutPool.env" .Values.rolloutPool.env -}}
{{- $poolNcclField := ternary "raycluster.nccl" "raycluster.rolloutPool.nccl" (kindIs "invalid" .Values.rolloutPool.nccl) -}}
{{- range $name, $_ := (include "raycluster.rolloutPoolPlacement" . | fromJson).nccl -}}
{{- $_ := set $poolOwned $name (printf "%s.%s" $poolNcclField $name) -}}
{{- end -}}
{{- end -}}
{{- range $list, $items := $lists -}}
{{- $ownedHere := ternary $poolOwned $owned (eq $list "rolloutPool.env") -}}
{{- range $index, $item := $items -}}
{{- $field := printf "raycluster.%s[%d]" $list $index -}}
{{- /* Ray's token's variables get the one finding that says to remove them, not a Secret to move them to. */ -}}
{{- if ne (get $ownedHere $item.name | default "") "global.rayAuth.tokenSecret" -}}
{{- include "raycluster.rules.envCredential" (dict "state" $.state "field" $field "item" $item) -}}
{{- end -}}
{{- if hasKey $ownedHere $item.name -}}
{{- include "raycluster.rules.ownedEnv" (dict "state" $.state "field" $field "name" $item.name "setBy" (get $ownedHere $item.name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $name, $_ := .Values.extraSecretEnv -}}
{{- if hasKey $owned $name -}}
{{- $field := printf "raycluster.extraSecretEnv.%s" $name -}}
{{- include "raycluster.rules.ownedEnv" (dict "state" $.state "field" $field "name" $name "setBy" (get $owned $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A container gets each variable once: raycluster.env, then its role's env (the rollout pool's too), then extraSecretEnv;
     a name given twice leaves one of the two values to the order KubeRay and the kubelet read them in. Each pair is
     reported once: raycluster.env's own with the head. */}}
{{- define "raycluster.rules.envTwice" -}}
{{- $roles := list "head" "worker" -}}
{{- if include "verl-ppo.rolloutPoolEnabled" . }}{{ $roles = append $roles "rolloutPool" }}{{ end -}}
{{- range $role := $roles -}}
{{- $seen := dict -}}
{{- $lists := list (dict "list" "env" "items" ($.Values.env | default list))
  (dict "list" (printf "%s.env" $role) "items" ((get $.Values $role).env | default list)) -}}
{{- range $lists -}}
{{- $list := .list -}}
{{- range $index, $item := .items -}}
{{- $field := printf "raycluster.%s[%d]" $list $index -}}
{{- if and (hasKey $seen $item.name) (or (ne $list "env") (eq $role "head")) -}}
{{- $problem := printf "sets %s a second time (first at %s): the container would get one of the two values" $item.name (get $seen $item.name) -}}
{{- $fix := printf "keep one entry of %s: remove this one or the one at %s" $item.name (get $seen $item.name) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $item.name "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- $_ := set $seen $item.name $field -}}
{{- end -}}
{{- end -}}
{{- range $name, $_ := $.Values.extraSecretEnv -}}
{{- if and (hasKey $seen $name) (or (eq $role "head") (not (hasPrefix "raycluster.env[" (get $seen $name)))) -}}
{{- $problem := printf "sets %s, which %s sets too: the container would get one of the two values" $name (get $seen $name) -}}
{{- $fix := printf "keep one: remove %s, or this extraSecretEnv entry" (get $seen $name) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "raycluster.extraSecretEnv.%s" $name) "value" $name "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A literal value would be stored in plain text in the RayCluster: no credentials. (dict "state" "field" "item"). */}}
{{- define "raycluster.rules.envCredential" -}}
{{- $item := .item -}}
{{- $shape := include "verl-ppo.looksLikeCredentialValue" (dict "state" .state "text" $item.value) -}}
{{- $looksLike := or (include "verl-ppo.looksLikeCredential" (dict "state" .state "text" $item.name)) $shape -}}
{{- if and (hasKey $item "value") $looksLike -}}
{{- $what := ternary (printf "holds %s" $shape) "is a credential" (not (empty $shape)) -}}
{{- $problem := printf "%s as a literal value: it would be stored in plain text in the RayCluster" $what -}}
{{- $fix := cat "use extraSecretEnv: kubectl create secret generic <name> --from-literal=value=...;"
  (printf "then --set raycluster.extraSecretEnv.%s.secretName=<name> --set raycluster.extraSecretEnv.%s.key=value" $item.name $item.name)
  "(or raycluster.credentials.wandb / .huggingface)" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" $item.name "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* One variable from values that would replace one the chart sets: (dict "state" "field" "name" "setBy"). */}}
{{- define "raycluster.rules.ownedEnv" -}}
{{- $problem := printf "would replace the %s the chart sets on the Ray pods (from %s)" .name .setBy -}}
{{- $fix := printf "remove it and set %s instead" .setBy -}}
{{- if eq .name "PYTHONPATH" }}{{ $fix = "remove it and --set raycluster.pythonPath=<your directories, colon-separated> instead" }}{{ end -}}
{{- if eq .setBy "global.rayAuth.tokenSecret" -}}
{{- $problem = cat (printf "would replace Ray's token setting %s, which KubeRay sets from global.rayAuth.tokenSecret" .name)
  "and leaves as it is where a container already has it: it could turn the token off or give the nodes another one" -}}
{{- $fix = cat "remove it: KubeRay sets RAY_AUTH_MODE=token and RAY_AUTH_TOKEN from the Secret on every Ray container;"
  "to run without the token, --set global.rayAuth.tokenSecret=''" -}}
{{- end -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" .name "problem" $problem "fix" $fix) -}}
{{- end -}}

{{/* A Kueue priority means nothing without a Kueue queue. */}}
{{- define "raycluster.rules.priorityWithoutQueue" -}}
{{- $q := .Values.queue -}}
{{- if and $q.workloadPriorityClass (not $q.kueue) -}}
{{- $problem := "is a Kueue priority, but no Kueue queue is set" -}}
{{- $fix := "--set raycluster.queue.kueue=<LocalQueue>, or --set raycluster.queue.workloadPriorityClass=''" -}}
{{- $field := "raycluster.queue.workloadPriorityClass" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" $q.workloadPriorityClass "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Kueue's elastic admission is for a queued, autoscaling RayCluster. */}}
{{- define "raycluster.rules.elasticNeeds" -}}
{{- if and .Values.queue.elastic (not (include "raycluster.elasticQueue" .)) -}}
{{- $problem := cat "is Kueue's elastic admission of an autoscaling cluster:"
  "it needs raycluster.queue.kueue and raycluster.worker.autoscaling.enabled" -}}
{{- $fix := "--set raycluster.queue.kueue=<LocalQueue> --set raycluster.worker.autoscaling.enabled=true, or --set raycluster.queue.elastic=false" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.queue.elastic" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Kueue admits a queued cluster at a fixed size unless it admits it elastically. */}}
{{- define "raycluster.rules.autoscalingQueued" -}}
{{- if and .Values.queue.kueue .Values.worker.autoscaling.enabled (not (include "raycluster.elasticQueue" .)) -}}
{{- $problem := "is refused by Kueue for a queued cluster unless it is admitted elastically: it admits a fixed size" -}}
{{- $fix := cat "--set raycluster.queue.elastic=true (Kueue's elastic workloads: 0.18 or later, a RayJob 0.19),"
  "or --set raycluster.worker.autoscaling.enabled=false, or --set raycluster.queue.kueue=''" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.worker.autoscaling.enabled" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Kueue reserves the name head for the head's pod set. */}}
{{- define "raycluster.rules.groupNameHead" -}}
{{- if and .Values.queue.kueue (eq .Values.worker.groupName "head") -}}
{{- $problem := "is the name Kueue reserves for the head's pod set" -}}
{{- $fix := "--set raycluster.worker.groupName=workergroup" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.worker.groupName" "value" "head" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A release larger than its lone ClusterQueue's whole GPU quota would wait forever (read from the cluster with
     lookup on install and upgrade; helm template has no cluster and skips it). */}}
{{- define "raycluster.rules.queueQuota" -}}
{{- with .Values.queue.kueue -}}
{{- $localQueue := lookup "kueue.x-k8s.io/v1beta2" "LocalQueue" $.Release.Namespace . -}}
{{- with $localQueue -}}
{{- $clusterQueue := lookup "kueue.x-k8s.io/v1beta2" "ClusterQueue" "" .spec.clusterQueue -}}
{{- /* A ClusterQueue in a cohort may borrow beyond its own quota: only a lone one has a hard ceiling. */ -}}
{{- if and $clusterQueue (not $clusterQueue.spec.cohortName) -}}
{{- $resource := $.Values.global.gpu.resourceName -}}
{{- $quota := include "raycluster.queueGpuQuota" (dict "clusterQueue" $clusterQueue "resource" $resource) | int -}}
{{- $gpus := include "verl-ppo.clusterGpus" $ | int -}}
{{- if gt $gpus $quota -}}
{{- $problem := cat (printf "leads to ClusterQueue %s, whose whole quota is %d %s:" $clusterQueue.metadata.name $quota $resource)
  (printf "this release needs %d (global.gpu and global.rolloutPool), so Kueue would never admit it and it would wait forever" $gpus) -}}
{{- $fix := cat "fit the quota (e.g. fewer global.gpu.nodes), ask for a larger quota, or name another LocalQueue:"
  "--set raycluster.queue.kueue=<LocalQueue>" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.queue.kueue" "value" $.Values.queue.kueue "problem" $problem "fix" $fix) -}}
{{- end -}}
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

{{/* GCS fault tolerance keeps the cluster's state in an external Redis: it needs its address. */}}
{{- define "raycluster.rules.redisAddress" -}}
{{- $ft := .Values.gcsFaultTolerance -}}
{{- if and $ft.enabled (not $ft.redisAddress) -}}
{{- $problem := "is empty: GCS fault tolerance keeps the cluster's state in an external Redis" -}}
{{- $fix := cat "--set raycluster.gcsFaultTolerance.redisAddress=<host:port of your Redis>,"
  "or --set raycluster.gcsFaultTolerance.enabled=false" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.gcsFaultTolerance.redisAddress" "value" "" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The Redis password comes only from a Secret, never the ray start line. */}}
{{- define "raycluster.rules.redisPassword" -}}
{{- range $role := list "head" "worker" "rolloutPool" -}}
{{- if hasKey ((get $.Values $role).rayStartParams | default dict) "redis-password" -}}
{{- $problem := "puts the Redis password on the ray start line, in plain text in the RayCluster" -}}
{{- $fix := cat "kubectl create secret generic <name> --from-literal=password=...;"
  "then --set raycluster.gcsFaultTolerance.passwordSecret.secretName=<name>"
  (printf "and remove raycluster.%s.rayStartParams.redis-password" $role) -}}
{{- $field := printf "raycluster.%s.rayStartParams.redis-password" $role -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" "<hidden>" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* With a rollout pool the chart owns each group's Ray resources: they keep veRL's training pool and rollout replicas
     on their own groups (verl-ppo.poolResources). */}}
{{- define "raycluster.rules.sideResources" -}}
{{- if include "verl-ppo.rolloutPoolEnabled" . -}}
{{- range $role := list "head" "worker" "rolloutPool" -}}
{{- $params := (get $.Values $role).rayStartParams | default dict -}}
{{- if hasKey $params "resources" -}}
{{- $problem := "is set by the chart while a rollout pool runs: each group's Ray resource keeps veRL's pools apart" -}}
{{- $fix := printf "remove raycluster.%s.rayStartParams.resources (docs/operations.md, the rollout pool)" $role -}}
{{- $field := printf "raycluster.%s.rayStartParams.resources" $role -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" (get $params "resources") "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Ray's token needs a Ray that has it: KubeRay refuses authOptions without spec.rayVersion 2.52.0 or later. */}}
{{- define "raycluster.rules.rayAuthVersion" -}}
{{- with include "verl-ppo.rayAuthSecret" . -}}
{{- $version := $.Values.rayVersion | default "" -}}
{{- $release := include "raycluster.rayRelease" $version -}}
{{- if not (and $release (semverCompare ">=2.52.0-0" $release)) -}}
{{- $problem := cat (printf "must name a Ray of 2.52.0 or later with global.rayAuth.tokenSecret=%s:" .)
  "KubeRay checks it before it turns Ray's token authentication on, and refuses the cluster otherwise" -}}
{{- $fix := "--set raycluster.rayVersion=<the image's Ray version, 2.52.0 or later>, or --set global.rayAuth.tokenSecret=''" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "raycluster.rayVersion" "value" $version "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Ray reads the Authorization header before its own X-Ray-Authorization: basic auth's credentials, which nginx
     passes on, would be taken for a token and refused. */}}
{{- define "raycluster.rules.rayAuthBasicAuth" -}}
{{- if include "verl-ppo.rayAuthSecret" . -}}
{{- with and .Values.ingress.enabled .Values.ingress.accessControl.basicAuthSecret -}}
{{- $problem := cat "sends its credentials to the dashboard in the Authorization header, which Ray reads before its token header:"
  "with global.rayAuth.tokenSecret every request through the Ingress would be refused (403)" -}}
{{- $fix := cat "drop basic auth (--set raycluster.ingress.accessControl.basicAuthSecret=''):"
  "Ray's token is the Ingress's access control, sourceRanges may stay; or --set global.rayAuth.tokenSecret='' to keep basic auth" -}}
{{- $field := "raycluster.ingress.accessControl.basicAuthSecret" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" . "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* An upgrade of a running queued release: Kueue (v0.18 and later, ValidateRayAndSparkJobUpdates) refuses to change
     or remove the queue label of a workload that is not suspended, and to remove its priority class at any time. The
     live object is read with lookup at install and upgrade (helm template and --dry-run without a cluster see none),
     so the refusal comes before Helm changes anything, naming the value to keep. Each rule gets
     (dict "state" "Values" "live" <the live RayCluster or RayJob> "kind"). */}}
{{- define "raycluster.rules.queueUpgrade" -}}
{{- $kind := ternary "RayJob" "RayCluster" (eq (include "verl-ppo.rayJobMode" .) "true") -}}
{{- with lookup "ray.io/v1" $kind .Release.Namespace (include "verl-ppo.clusterName" .) -}}
{{- $upgrade := dict "state" $.state "Values" $.Values "live" . "kind" $kind -}}
{{- include "raycluster.rules.queueChange" $upgrade -}}
{{- include "raycluster.rules.elasticChange" $upgrade -}}
{{- include "raycluster.rules.priorityRemoved" $upgrade -}}
{{- end -}}
{{- end -}}

{{/* The queue of a running workload stays as it is. */}}
{{- define "raycluster.rules.queueChange" -}}
{{- $liveQueue := get (.live.metadata.labels | default dict) "kueue.x-k8s.io/queue-name" -}}
{{- $running := not (.live.spec.suspend | default false) -}}
{{- $queue := .Values.queue.kueue | default "" -}}
{{- /* A "default" label with no value set may be Kueue's own (its webhook names the namespace's default LocalQueue and
       the default WorkloadPriorityClass, both "default"): Helm leaves a label it never rendered alone. */ -}}
{{- $kueueDefault := and (not $queue) (eq $liveQueue "default") -}}
{{- if and $liveQueue $running (ne $liveQueue $queue) (not $kueueDefault) -}}
{{- $name := .live.metadata.name -}}
{{- $problem := cat (printf "would change the queue of the running %s %s, admitted through LocalQueue %s:" .kind $name $liveQueue)
  "Kueue refuses to change or remove the queue label of a workload that is not suspended" -}}
{{- $suspend := printf "kubectl patch %s %s --type merge -p '{\"spec\":{\"suspend\":true}}'" (lower .kind) $name -}}
{{- $fix := printf "keep --set raycluster.queue.kueue=%s for this run, or end the run first (helm uninstall, or %s) and then change the queue"
  $liveQueue $suspend -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.queue.kueue" "value" $queue "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Kueue's elastic admission of an existing workload stays as it is. */}}
{{- define "raycluster.rules.elasticChange" -}}
{{- $liveQueue := get (.live.metadata.labels | default dict) "kueue.x-k8s.io/queue-name" -}}
{{- $liveElastic := eq (get (.live.metadata.annotations | default dict) "kueue.x-k8s.io/elastic-job") "true" -}}
{{- if and $liveQueue (ne $liveElastic (eq (include "raycluster.elasticQueue" .) "true")) -}}
{{- $problem := printf "would switch Kueue's elastic admission of the %s %s: Kueue refuses to change it on an existing workload"
  .kind .live.metadata.name -}}
{{- $fix := cat (printf "keep raycluster.queue.elastic=%t (and what it needs: queue.kueue, worker.autoscaling.enabled)" $liveElastic)
  "for this cluster, or uninstall the release first" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.queue.elastic" "value" (not $liveElastic) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A workload's priority class is never removed. */}}
{{- define "raycluster.rules.priorityRemoved" -}}
{{- $livePriority := get (.live.metadata.labels | default dict) "kueue.x-k8s.io/priority-class" -}}
{{- if and $livePriority (not .Values.queue.workloadPriorityClass) (ne $livePriority "default") -}}
{{- $problem := printf "would remove the priority class %s of the %s %s: Kueue refuses to remove a workload's priority class"
  $livePriority .kind .live.metadata.name -}}
{{- $fix := printf "keep --set raycluster.queue.workloadPriorityClass=%s, or uninstall the release first" $livePriority -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "raycluster.queue.workloadPriorityClass" "value" "" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* raycluster.nccl holds NCCL's variables only. */}}
{{- define "raycluster.rules.ncclName" -}}
{{- range $field, $nccl := dict "raycluster.nccl" .Values.nccl "raycluster.rolloutPool.nccl" (.Values.rolloutPool.nccl | default dict) -}}
{{- range $name, $value := $nccl -}}
{{- if not (regexMatch "^NCCL_[A-Z0-9_]+$" $name) -}}
{{- $problem := "is not an NCCL_* variable" -}}
{{- $fix := printf "put other variables in %s" (ternary "raycluster.env" "raycluster.rolloutPool.env" (eq $field "raycluster.nccl")) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s.%s" $field $name) "value" $value "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The release of a raycluster.rayVersion as KubeRay parses it (a leading v and a missing patch allowed: v2.60.0 and 2.60
     are 2.60.0), "" when it names none. */}}
{{- define "raycluster.rayRelease" -}}
{{- $parts := regexFind "^v?[0-9]+\\.[0-9]+(\\.[0-9]+)?" (toString .) | trimPrefix "v" | splitList "." -}}
{{- if ge (len $parts) 2 }}{{ join "." (ternary $parts (append $parts "0") (eq (len $parts) 3)) }}{{ end -}}
{{- end -}}

{{/* A pod asking for more GPUs than its node has stays Pending: global.gpu.perNode is at most the node type's GPUs. */}}
{{- define "raycluster.rules.gpusPerNode" -}}
{{- $perNode := int .Values.global.gpu.perNode -}}
{{- with .Values.gpuShape.gpus -}}
{{- if gt $perNode (int .) -}}
{{- $problem := printf "is more than the %d GPUs of a %s node (raycluster.gpuShape.gpus): the Ray pods would stay Pending" (int .) $.Values.gpuShape.name -}}
{{- $fix := printf "--set global.gpu.perNode=%d (all of the node's GPUs), or the values of another node type (values/)" (int .) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "global.gpu.perNode" "value" $perNode "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A rollout pool with a node type of its own (raycluster.rolloutPool.gpuShape) asks at most its GPUs a node. */}}
{{- define "raycluster.rules.poolGpusPerNode" -}}
{{- $shape := .Values.rolloutPool.gpuShape -}}
{{- if and (include "verl-ppo.rolloutPoolEnabled" .) $shape $shape.gpus -}}
{{- $perNode := include "verl-ppo.rolloutPoolGpusPerNode" . | int -}}
{{- if gt $perNode (int $shape.gpus) -}}
{{- $problem := printf "is more than the %d GPUs of a %s node (raycluster.rolloutPool.gpuShape.gpus): the pool's pods would stay Pending"
  (int $shape.gpus) $shape.name -}}
{{- $fix := printf "--set global.rolloutPool.perNode=%d (all of the node's GPUs)" (int $shape.gpus) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.rolloutPool.perNode" "value" $perNode "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The rollout-metrics sidecar shares the head's pod: limits above its requests would make the head Burstable, the
     first pod evicted under node pressure. */}}
{{- define "raycluster.rules.rolloutSidecarQos" -}}
{{- $settings := .Values.global.rolloutMetrics -}}
{{- if and (include "verl-ppo.rolloutMetricsEnabled" .) $settings.resources.requests $settings.resources.limits -}}
{{- $requests := $settings.resources.requests -}}
{{- $limits := $settings.resources.limits -}}
{{- $amounts := dict "cpu" (list (include "verl-ppo.cpuMillis" $requests.cpu) (include "verl-ppo.cpuMillis" $limits.cpu))
  "memory" (list (include "verl-ppo.memoryMiB" $requests.memory) (include "verl-ppo.memoryMiB" $limits.memory)) -}}
{{- range $resource, $pair := $amounts -}}
{{- if ne (first $pair) (last $pair) -}}
{{- $requested := include "verl-ppo.scalar" (get $requests $resource) -}}
{{- $problem := printf "differs from requests.%s (%s): the head's pod would lose its Guaranteed QoS and be evicted first" $resource $requested -}}
{{- $fix := printf "--set global.rolloutMetrics.resources.limits.%s=%s (equal to the request)" $resource $requested -}}
{{- $field := printf "global.rolloutMetrics.resources.limits.%s" $resource -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" (get $limits $resource) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The KubeRay operator's peer is admitted in RayJob mode only: set in RayCluster mode it does nothing. Neutral: the
     defaults (namespace default or unset, podLabels {}; tests/chart/test_bad_input.py holds them to values.yaml). */}}
{{- define "raycluster.rules.operatorInRayClusterMode" -}}
{{- if not (include "verl-ppo.rayJobMode" .) -}}
{{- $operator := .Values.networkPolicy.kubeRayOperator -}}
{{- $set := dict -}}
{{- if not (has ($operator.namespace | default "") (list "" "default")) }}{{ $_ := set $set "namespace" $operator.namespace }}{{ end -}}
{{- with $operator.podLabels }}{{ $_ := set $set "podLabels" (toJson .) }}{{ end -}}
{{- range $key, $value := $set -}}
{{- $problem := "is read in RayJob mode only (the NetworkPolicy admits KubeRay's operator to a RayJob's head); with global.mode=RayCluster it does nothing" -}}
{{- $fix := printf "remove raycluster.networkPolicy.kubeRayOperator.%s, or --set global.mode=RayJob" $key -}}
{{- $field := printf "raycluster.networkPolicy.kubeRayOperator.%s" $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $value "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
