{{/*
The rulebook's entry point: every rule that relates two or more values, checked at once, one failure
listing each broken rule with the field, its value, why, and the fix (Bitnami's validateValues habit).
The rules assume well-typed values: Helm checks them against values.schema.json before any template.

The umbrella's templates/validate.yaml calls it with the umbrella's context: it sees every component's
values. Each component's rules are `<component>.rules` in that component's _rules.tpl; they get
(dict "Values" <its section, with global> "Release" "Capabilities" "Files" <its chart's> "state"
"present"), name fields by
their path in the umbrella's values (ppo-job.data.trainBatchSize) and report through verl-ppo.rule.
*/}}
{{- define "verl-ppo.validate" -}}
{{- $present := dict -}}
{{- range $name := include "verl-ppo.components" . | fromJsonArray -}}
{{- $section := index $.Values $name -}}
{{- if $section.enabled -}}
{{- $_ := set $present $name (set (deepCopy $section) "global" $.Values.global) -}}
{{- end -}}
{{- end -}}
{{- $state := dict "findings" list -}}
{{- include "verl-ppo.rules.release" (dict "Values" .Values "Release" .Release "state" $state "present" $present) -}}
{{- range $name, $values := $present -}}
{{- include (printf "%s.rules" $name) (dict "Values" $values "Release" $.Release "Capabilities" $.Capabilities "Files" (index $.Subcharts $name).Files "state" $state "present" $present) -}}
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
{{- $global := .Values.global -}}
{{- $fullname := include "verl-ppo.fullname" . -}}
{{- $nameField := ternary "global.fullnameOverride" "release name" (not (empty $global.fullnameOverride)) -}}
{{- if gt (len $fullname) 45 -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $nameField "value" $fullname "problem" (printf "is %d characters; KubeRay and the Job controller append suffixes, so at most 45 fit" (len $fullname)) "fix" "choose a shorter release name, or --set global.fullnameOverride=<at most 45 characters>") -}}
{{- end -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $fullname) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $nameField "value" $fullname "problem" "is not a DNS-1035 label, which KubeRay requires of a RayCluster name" "fix" "use lower-case letters, digits and '-', starting with a letter, or --set global.fullnameOverride=<such a name>") -}}
{{- end -}}
{{- range $name := uniq (list .Release.Name $fullname) -}}
{{- if has $name (list "y" "yes" "n" "no" "true" "false" "on" "off" "null") -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (ternary "release name" $nameField (eq $name $.Release.Name)) "value" $name "problem" "reads as a boolean or null in YAML, so every label that carries it breaks" "fix" "choose another release name (labels carry it as it is)") -}}
{{- end -}}
{{- end -}}
{{- $existing := $global.storage.existingClaim -}}
{{- $creates := hasKey .present "storage" -}}
{{- if and $creates $existing -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.storage.existingClaim" "value" $existing "problem" "is set while the storage component would create a second claim" "fix" "--set storage.enabled=false to mount the existing claim, or --set global.storage.existingClaim=''") -}}
{{- end -}}
{{- $mounts := or (hasKey .present "raycluster") (hasKey .present "ppo-job") (and (hasKey .present "observability") $global.tensorboard.enabled) -}}
{{- if and (not $creates) (not $existing) $mounts -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.storage.existingClaim" "value" "" "problem" "is empty with storage.enabled=false: the pods need a ReadWriteMany claim" "fix" "--set global.storage.existingClaim=<claim>") -}}
{{- end -}}
{{- $job := get .present "ppo-job" -}}
{{- $ray := get .present "raycluster" -}}
{{- if and $job $ray (has "wandb" ($job.trainer.logger | default list)) -}}
{{- $fromSecret := or $ray.credentials.wandb.secretName (hasKey ($ray.extraSecretEnv | default dict) "WANDB_API_KEY") -}}
{{- range $item := concat ($ray.env | default list) ($ray.head.env | default list) -}}
{{- if and (eq $item.name "WANDB_API_KEY") $item.valueFrom -}}{{- $fromSecret = true -}}{{- end -}}
{{- end -}}
{{- if not $fromSecret -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.trainer.logger" "value" "wandb" "problem" "logs to W&B, but no WANDB_API_KEY reaches the Ray pods from a Secret" "fix" "kubectl create secret generic wandb --from-literal=api-key=...; then --set raycluster.credentials.wandb.secretName=wandb") -}}
{{- end -}}
{{- end -}}
{{- if and $job (not $ray) (not $job.dashboardURL) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.dashboardURL" "value" "" "problem" "is empty: the run would go to this release's RayCluster, which raycluster.enabled=false does not create" "fix" "--set ppo-job.dashboardURL=http://<head service>.<namespace>.svc:8265 (the Ray cluster to run on), or --set raycluster.enabled=true") -}}
{{- end -}}
{{- if and $job $ray $job.dashboardURL (not (include "verl-ppo.rayJobMode" .)) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.dashboardURL" "value" $job.dashboardURL "problem" "sends the run to another Ray cluster while this release creates its own RayCluster, whose GPUs would then idle" "fix" "--set ppo-job.dashboardURL='' to run on this release's cluster, or --set raycluster.enabled=false to run on the other one") -}}
{{- end -}}
{{- include "verl-ppo.rules.rayJobMode" . -}}
{{- $path := $global.tensorboard.ingressPath -}}
{{- if and $path (not (hasKey .present "observability")) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" "routes to TensorBoard's Service, which observability.enabled=false does not create" "fix" "--set observability.enabled=true, or --set global.tensorboard.ingressPath=''") -}}
{{- end -}}
{{- end -}}

{{/* RayJob mode: the umbrella renders the RayJob from both components' values; a queued RayJob must free its cluster. */}}
{{- define "verl-ppo.rules.rayJobMode" -}}
{{- if include "verl-ppo.rayJobMode" . -}}
{{- $missing := list -}}
{{- range $name := list "raycluster" "ppo-job" -}}
{{- if not (hasKey $.present $name) }}{{ $missing = append $missing $name }}{{ end -}}
{{- end -}}
{{- if $missing -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.mode" "value" "RayJob" "problem" (printf "needs both the raycluster and the ppo-job components; %s is disabled" (join " and " $missing)) "fix" (printf "--set %s.enabled=true, or --set global.mode=RayCluster" (first $missing))) -}}
{{- else -}}
{{- $queue := (get .present "raycluster").queue.kueue -}}
{{- if and $queue (not (get .present "ppo-job").rayJob.shutdownAfterJobFinishes) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rayJob.shutdownAfterJobFinishes" "value" false "problem" (printf "is false while raycluster.queue.kueue (%s) queues the RayJob: Kueue refuses a queued RayJob whose cluster would outlive the run and hold the queue's GPUs" $queue) "fix" "--set ppo-job.rayJob.shutdownAfterJobFinishes=true (and drop ppo-job.rayJob.deletionStrategy), or --set raycluster.queue.kueue=''") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
