{{/*
The rulebook's entry point: every rule that relates two or more values, checked at once, one failure
listing each broken rule with the field, its value, why, and the fix (Bitnami's validateValues habit).
The rules assume well-typed values: Helm checks them against values.schema.json before any template.

The umbrella's templates/validate.yaml calls it with the umbrella's context: it sees every component's
values. Each component's rules are listed by `<component>.rules` in that component's _rules.tpl; they get
(dict "Values" <its section, with global> "Release" "Capabilities" "Files" <its chart's> "state" "present"),
name fields by their path in the umbrella's values (ppo-job.data.trainBatchSize) and report through
verl-ppo.rule. One define per rule: its condition, then its problem and its fix built on lines of their own,
then the one verl-ppo.rule call that records them.
*/}}
{{- define "verl-ppo.validate" -}}
{{- $present := dict -}}
{{- range $name := include "verl-ppo.components" . | fromJsonArray -}}
{{- $section := index $.Values $name -}}
{{- if $section.enabled -}}
{{- $_ := set $present $name (set (deepCopy $section) "global" $.Values.global) -}}
{{- end -}}
{{- end -}}
{{- $state := dict "findings" list "credentials" (.Files.Get "files/credentials.yaml" | fromYaml) -}}
{{- $release := dict "Values" .Values "Release" .Release "Chart" .Chart "Capabilities" .Capabilities "state" $state "present" $present -}}
{{- /* Most rules read the mount path: without one they would stop on a template error before this rule is heard. */}}
{{- include "verl-ppo.rules.mountPathSet" $release -}}
{{- include "verl-ppo.failure" (dict "findings" $state.findings "chart" .Chart.Name) -}}
{{- include "verl-ppo.rules.release" $release -}}
{{- range $name, $values := $present -}}
{{- $context := dict "Values" $values "Release" $.Release "Capabilities" $.Capabilities "state" $state "present" $present -}}
{{- include (printf "%s.rules" $name) (set $context "Files" (index $.Subcharts $name).Files) -}}
{{- end -}}
{{- include "verl-ppo.failure" (dict "findings" $state.findings "chart" .Chart.Name) -}}
{{- end -}}

{{/* The one failure: (dict "findings" "chart"), each finding a line `  - field=value: why. Fix: how`. */}}
{{- define "verl-ppo.failure" -}}
{{- with .findings -}}
{{- $lines := list (printf "%s: %d value(s) to fix (each line: field=value: why. Fix: how):" $.chart (len .)) -}}
{{- range . -}}
{{- $lines = append $lines (printf "  - %s=%s: %s. Fix: %s" .field (ternary "\"\"" (toString .value) (eq (toString .value) "")) .problem .fix) -}}
{{- end -}}
{{- fail (printf "\n%s" (join "\n" $lines)) -}}
{{- end -}}
{{- end -}}

{{/* Records one broken rule: (dict "state" .state "field" f "value" v "problem" p "fix" x). */}}
{{- define "verl-ppo.rule" -}}
{{- $_ := set .state "findings" (append .state.findings (pick . "field" "value" "problem" "fix")) -}}
{{- end -}}

{{/* Rules of the release as a whole: its name, its one shared claim, TensorBoard across components. */}}
{{- define "verl-ppo.rules.release" -}}
{{- include "verl-ppo.rules.nameLength" . -}}
{{- include "verl-ppo.rules.nameDns" . -}}
{{- include "verl-ppo.rules.nameNotBoolean" . -}}
{{- include "verl-ppo.rules.claimTwice" . -}}
{{- include "verl-ppo.rules.claimMissing" . -}}
{{- include "verl-ppo.rules.wandbSecret" . -}}
{{- include "verl-ppo.rules.dashboardURLWithoutCluster" . -}}
{{- include "verl-ppo.rules.dashboardURLBesideCluster" . -}}
{{- include "verl-ppo.rules.rayJobComponents" . -}}
{{- include "verl-ppo.rules.rayJobQueueShutdown" . -}}
{{- include "verl-ppo.rules.tensorboardPathWithoutObservability" . -}}
{{- include "verl-ppo.rules.namespaceDns" . -}}
{{- include "verl-ppo.rules.mountPathCollides" . -}}
{{- include "verl-ppo.rules.labelsChartOwned" . -}}
{{- include "verl-ppo.rules.kueueByHand" . -}}
{{- include "verl-ppo.rules.rolloutMetricsUnread" . -}}
{{- end -}}

{{/* The field the release's name comes from, as the name rules print it. */}}
{{- define "verl-ppo.rules.nameField" -}}
{{- ternary "global.fullnameOverride" "release name" (not (empty .Values.global.fullnameOverride)) -}}
{{- end -}}

{{/* KubeRay and the Job controller append suffixes to the name: at most 45 characters fit. */}}
{{- define "verl-ppo.rules.nameLength" -}}
{{- $fullname := include "verl-ppo.fullname" . -}}
{{- if gt (len $fullname) 45 -}}
{{- $problem := printf "is %d characters; KubeRay and the Job controller append suffixes, so at most 45 fit" (len $fullname) -}}
{{- $fix := "choose a shorter release name, or --set global.fullnameOverride=<at most 45 characters>" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (include "verl-ppo.rules.nameField" .) "value" $fullname "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* KubeRay requires a DNS-1035 label as a RayCluster's name. */}}
{{- define "verl-ppo.rules.nameDns" -}}
{{- $fullname := include "verl-ppo.fullname" . -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $fullname) -}}
{{- $problem := "is not a DNS-1035 label, which KubeRay requires of a RayCluster name" -}}
{{- $fix := "use lower-case letters, digits and '-', starting with a letter, or --set global.fullnameOverride=<such a name>" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (include "verl-ppo.rules.nameField" .) "value" $fullname "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Labels carry the release's name as it is: a name YAML reads as a boolean or null breaks them. */}}
{{- define "verl-ppo.rules.nameNotBoolean" -}}
{{- $fullname := include "verl-ppo.fullname" . -}}
{{- range $name := uniq (list $.Release.Name $fullname) -}}
{{- if has $name (list "y" "yes" "n" "no" "true" "false" "on" "off" "null") -}}
{{- $field := ternary "release name" (include "verl-ppo.rules.nameField" $) (eq $name $.Release.Name) -}}
{{- $problem := "reads as a boolean or null in YAML, so every label that carries it breaks" -}}
{{- $fix := "choose another release name (labels carry it as it is)" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $name "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* One shared claim: an existing one, or the one the storage component creates, not both. */}}
{{- define "verl-ppo.rules.claimTwice" -}}
{{- $existing := .Values.global.storage.existingClaim -}}
{{- if and (hasKey .present "storage") $existing -}}
{{- $problem := "is set while the storage component would create a second claim" -}}
{{- $fix := "--set storage.enabled=false to mount the existing claim, or --set global.storage.existingClaim=''" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.storage.existingClaim" "value" $existing "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The Ray pods, the submitter and TensorBoard mount a claim: with storage off, an existing one. */}}
{{- define "verl-ppo.rules.claimMissing" -}}
{{- $global := .Values.global -}}
{{- $mounts := or (hasKey .present "raycluster") (hasKey .present "ppo-job") (and (hasKey .present "observability") $global.tensorboard.enabled) -}}
{{- if and (not (hasKey .present "storage")) (not $global.storage.existingClaim) $mounts -}}
{{- $problem := "is empty with storage.enabled=false: the pods need a ReadWriteMany claim" -}}
{{- $fix := "--set global.storage.existingClaim=<claim>" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.storage.existingClaim" "value" "" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A run that logs to W&B needs WANDB_API_KEY on the Ray pods, from a Secret. */}}
{{- define "verl-ppo.rules.wandbSecret" -}}
{{- $job := get .present "ppo-job" -}}
{{- $ray := get .present "raycluster" -}}
{{- if and $job $ray (has "wandb" ($job.trainer.logger | default list)) -}}
{{- $fromSecret := or $ray.credentials.wandb.secretName (hasKey ($ray.extraSecretEnv | default dict) "WANDB_API_KEY") -}}
{{- range $item := concat ($ray.env | default list) ($ray.head.env | default list) -}}
{{- if and (eq $item.name "WANDB_API_KEY") $item.valueFrom -}}{{- $fromSecret = true -}}{{- end -}}
{{- end -}}
{{- if not $fromSecret -}}
{{- $problem := "logs to W&B, but no WANDB_API_KEY reaches the Ray pods from a Secret" -}}
{{- $fix := cat "kubectl create secret generic wandb --from-literal=api-key=...;"
  "then --set raycluster.credentials.wandb.secretName=wandb" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.trainer.logger" "value" "wandb" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Without this release's RayCluster, the submitter needs another cluster's address. */}}
{{- define "verl-ppo.rules.dashboardURLWithoutCluster" -}}
{{- $job := get .present "ppo-job" -}}
{{- if and $job (not (hasKey .present "raycluster")) (not $job.dashboardURL) -}}
{{- $problem := cat "is empty: the run would go to this release's RayCluster,"
  "which raycluster.enabled=false does not create" -}}
{{- $fix := cat "--set ppo-job.dashboardURL=http://<head service>.<namespace>.svc:8265 (the Ray cluster to run on),"
  "or --set raycluster.enabled=true" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.dashboardURL" "value" "" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* With this release's RayCluster, a run sent elsewhere leaves its GPUs idle. */}}
{{- define "verl-ppo.rules.dashboardURLBesideCluster" -}}
{{- $job := get .present "ppo-job" -}}
{{- if and $job (hasKey .present "raycluster") $job.dashboardURL (not (include "verl-ppo.rayJobMode" .)) -}}
{{- $problem := cat "sends the run to another Ray cluster while this release creates its own RayCluster,"
  "whose GPUs would then idle" -}}
{{- $fix := cat "--set ppo-job.dashboardURL='' to run on this release's cluster,"
  "or --set raycluster.enabled=false to run on the other one" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.dashboardURL" "value" $job.dashboardURL "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* RayJob mode: the umbrella renders the RayJob from both components' values. */}}
{{- define "verl-ppo.rules.rayJobComponents" -}}
{{- if include "verl-ppo.rayJobMode" . -}}
{{- $missing := list -}}
{{- range $name := list "raycluster" "ppo-job" -}}
{{- if not (hasKey $.present $name) }}{{ $missing = append $missing $name }}{{ end -}}
{{- end -}}
{{- if $missing -}}
{{- $problem := printf "needs both the raycluster and the ppo-job components; %s is disabled" (join " and " $missing) -}}
{{- $fix := printf "--set %s.enabled=true, or --set global.mode=RayCluster" (first $missing) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.mode" "value" "RayJob" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* RayJob mode: a queued RayJob must free its cluster when the run ends. */}}
{{- define "verl-ppo.rules.rayJobQueueShutdown" -}}
{{- if and (include "verl-ppo.rayJobMode" .) (hasKey .present "raycluster") (hasKey .present "ppo-job") -}}
{{- $queue := (get .present "raycluster").queue.kueue -}}
{{- if and $queue (not (get .present "ppo-job").rayJob.shutdownAfterJobFinishes) -}}
{{- $problem := cat (printf "is false while raycluster.queue.kueue (%s) queues the RayJob:" $queue)
  "Kueue refuses a queued RayJob whose cluster would outlive the run and hold the queue's GPUs" -}}
{{- $fix := cat "--set ppo-job.rayJob.shutdownAfterJobFinishes=true (and drop ppo-job.rayJob.deletionStrategy),"
  "or --set raycluster.queue.kueue=''" -}}
{{- $field := "ppo-job.rayJob.shutdownAfterJobFinishes" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" false "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The TensorBoard path routes to the observability component's Service. */}}
{{- define "verl-ppo.rules.tensorboardPathWithoutObservability" -}}
{{- $path := .Values.global.tensorboard.ingressPath -}}
{{- if and $path (not (hasKey .present "observability")) -}}
{{- $problem := "routes to TensorBoard's Service, which observability.enabled=false does not create" -}}
{{- $fix := "--set observability.enabled=true, or --set global.tensorboard.ingressPath=''" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Every namespaced object carries the release's namespace: the API takes only a DNS-1123 label. */}}
{{- define "verl-ppo.rules.namespaceDns" -}}
{{- $namespace := .Release.Namespace -}}
{{- if not (and (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $namespace) (le (len $namespace) 63)) -}}
{{- $problem := "is not a namespace name (a DNS-1123 label): the API refuses every object of the release" -}}
{{- $fix := "--namespace <at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit>" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "release namespace" "value" $namespace "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Directories the chart mounts something at in its pods (JSON: path -> what): the shared volume may not cover or
     replace them. (raycluster.pythonPath may well lie on the volume: code the user put there. The image's own code is
     ppo-job's rule, ppo-job.rules.mountHidesImageCode, from files/images.yaml.) */}}
{{- define "verl-ppo.chartMountPaths" -}}
{{- $mounts := dict "/tmp/ray" "Ray's logs and sockets (the Ray pods)" "/dev/shm" "the Ray pods' shared memory"
  "/etc/verl-ppo" "the submitter's files and the tracing hook" "/ray-tmp" "the rollout-metrics sidecar's view of /tmp/ray"
  "/prometheus" "the rollout-metrics sidecar's data" "/var/run/secrets/kubernetes.io/serviceaccount" "the submitter's API token" -}}
{{- toJson $mounts -}}
{{- end -}}

{{/* The shared volume's mount path: --set global.storage.mountPath=null (or null in a values file) deletes the
     default, which the schema cannot ask back (a component's partial values would fail the umbrella's schema). */}}
{{- define "verl-ppo.rules.mountPathSet" -}}
{{- if kindIs "invalid" .Values.global.storage.mountPath -}}
{{- $problem := "leaves the shared volume without a mount path, which every pod and every path the run writes start from" -}}
{{- $fix := "--set global.storage.mountPath=/data (the default) or another plain absolute path" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.storage.mountPath" "value" "null" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The shared volume's mount path is its own directory: not /, not one the chart mounts something else at, nor a
     parent of one (it would hide it) or a directory inside one. */}}
{{- define "verl-ppo.rules.mountPathCollides" -}}
{{- $mount := clean .Values.global.storage.mountPath -}}
{{- range $path, $what := include "verl-ppo.chartMountPaths" .Values | fromJson -}}
{{- if or (eq $mount $path) (eq $mount "/") (hasPrefix (printf "%s/" $mount) $path) (hasPrefix (printf "%s/" $path) $mount) -}}
{{- $problem := printf "collides with %s, which the chart mounts at %s: one would hide the other" $what $path -}}
{{- $fix := "--set global.storage.mountPath=<a directory of its own, e.g. /data>" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "global.storage.mountPath" "value" $mount "problem" $problem "fix" $fix) -}}
{{- break -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The label maps from values (JSON: field -> map) that land on the release's objects and pods. */}}
{{- define "verl-ppo.userLabelMaps" -}}
{{- $maps := dict "global.commonLabels" (.Values.global.commonLabels | default dict) -}}
{{- with get .present "raycluster" -}}
{{- $_ := set $maps "raycluster.head.labels" (.head.labels | default dict) -}}
{{- $_ := set $maps "raycluster.worker.labels" (.worker.labels | default dict) -}}
{{- $_ := set $maps "raycluster.rolloutPool.labels" (.rolloutPool.labels | default dict) -}}
{{- end -}}
{{- with get .present "observability" -}}
{{- $_ := set $maps "observability.podMonitor.additionalLabels" (.podMonitor.additionalLabels | default dict) -}}
{{- end -}}
{{- toJson $maps -}}
{{- end -}}

{{/* Labels the chart sets itself (its name labels, verl-ppo.io/*, Grafana's dashboard label) or KubeRay does (ray.io/*):
     one from values would be dropped for the chart's, or move an object out of a selector. */}}
{{- define "verl-ppo.rules.labelsChartOwned" -}}
{{- $context := dict "ctx" (dict "Release" .Release "Chart" .Chart "Values" .Values) "component" "any" -}}
{{- $owned := merge (include "verl-ppo.chartLabels" $context | fromYaml) (include "verl-ppo.releasePodLabel" $context.ctx | fromYaml) -}}
{{- with get .present "observability" }}{{ $_ := set $owned .dashboards.label true }}{{ end -}}
{{- range $field, $labels := include "verl-ppo.userLabelMaps" . | fromJson -}}
{{- range $key := keys $labels | sortAlpha -}}
{{- if or (hasKey $owned $key) (hasPrefix "verl-ppo.io/" $key) (hasPrefix "ray.io/" $key) -}}
{{- $problem := printf "is a label the %s sets on its objects: their selectors, NetworkPolicies and readers go by it"
  (ternary "KubeRay operator" "chart" (hasPrefix "ray.io/" $key)) -}}
{{- $fix := printf "remove %s.%s (use a key of your own, e.g. example.com/team)" $field $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s.%s" $field $key) "value" (get $labels $key) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Kueue's labels and annotations (kueue.x-k8s.io/...) and Volcano's queue label come from raycluster.queue, where the
     rules check them: set by hand they would queue objects past those rules (and a hand-set elastic-job annotation
     makes every later upgrade refused). */}}
{{- define "verl-ppo.rules.kueueByHand" -}}
{{- $maps := include "verl-ppo.userLabelMaps" . | fromJson -}}
{{- with get .present "raycluster" -}}
{{- $_ := set $maps "raycluster.annotations" (.annotations | default dict) -}}
{{- $_ := set $maps "raycluster.head.annotations" (.head.annotations | default dict) -}}
{{- $_ := set $maps "raycluster.worker.annotations" (.worker.annotations | default dict) -}}
{{- $_ := set $maps "raycluster.rolloutPool.annotations" (.rolloutPool.annotations | default dict) -}}
{{- end -}}
{{- range $field, $map := $maps -}}
{{- range $key := keys $map | sortAlpha -}}
{{- if or (hasPrefix "kueue.x-k8s.io/" $key) (eq $key "volcano.sh/queue-name") -}}
{{- $problem := printf "is %s's own key, which the chart sets from raycluster.queue after checking what it refuses"
  (ternary "Kueue" "Volcano" (hasPrefix "kueue" $key)) -}}
{{- $fix := printf "remove %s.%s and set raycluster.queue (kueue: <LocalQueue>, workloadPriorityClass, elastic; volcano)" $field $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s.%s" $field $key) "value" (get $map $key) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Rollout metrics reach Prometheus through the head's sidecar (this release's RayCluster) and the head's PodMonitor
     (observability, its PodMonitors not off; `auto` follows the cluster, which helm template cannot see): without
     either nothing reads them. */}}
{{- define "verl-ppo.rules.rolloutMetricsUnread" -}}
{{- if include "verl-ppo.rolloutMetricsEnabled" . -}}
{{- $observability := get .present "observability" -}}
{{- $missing := "" -}}
{{- if not (hasKey .present "raycluster") -}}
{{- $missing = "raycluster.enabled=false: the Ray cluster is another release's, without the chart's rollout-metrics sidecar" -}}
{{- else if not $observability -}}
{{- $missing = "observability.enabled=false: no PodMonitor federates the sidecar's samples" -}}
{{- else if eq (toString $observability.podMonitor.enabled) "false" -}}
{{- $missing = "observability.podMonitor.enabled=false: no PodMonitor federates the sidecar's samples" -}}
{{- end -}}
{{- with $missing -}}
{{- $problem := printf "is on, but nothing reads the metrics with %s" . -}}
{{- $fix := "turn on what reads them (the RayCluster, observability and its PodMonitors), or --set global.rolloutMetrics.enabled=false" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "global.rolloutMetrics.enabled" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
