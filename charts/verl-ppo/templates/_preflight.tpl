{{/*
Checks across components, before anything renders. Each failure names the field, the value and the fix.
(Component-local rules live with their component: raycluster.validateIngress, ppo-job.validate.)
*/}}
{{- define "verl-ppo.preflight" -}}
{{- $v := .Values -}}
{{- $fullname := include "verl-ppo.fullname" . -}}
{{- $nameField := ternary "global.fullnameOverride" "the release name" (not (empty $v.global.fullnameOverride)) -}}
{{- if gt (len $fullname) 45 -}}
{{- include "verl-ppo.validate.fail" (dict "field" $nameField "value" $fullname "problem" (printf "is %d characters; KubeRay and the Job controller append suffixes, so at most 45 fit" (len $fullname)) "fix" "choose a shorter release name or --set global.fullnameOverride=<short-name>") -}}
{{- end -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $fullname) -}}
{{- include "verl-ppo.validate.fail" (dict "field" $nameField "value" $fullname "problem" "is not a DNS-1035 label, which KubeRay requires of a RayCluster name" "fix" "use lower-case letters, digits and '-', starting with a letter") -}}
{{- end -}}
{{- include "verl-ppo.preflight.storage" . -}}
{{- include "verl-ppo.preflight.shape" . -}}
{{- include "verl-ppo.preflight.tensorboard" . -}}
{{- end -}}

{{- define "verl-ppo.preflight.storage" -}}
{{- $v := .Values -}}
{{- $existing := $v.global.storage.existingClaim -}}
{{- if and $v.storage.enabled $existing -}}
{{- include "verl-ppo.validate.fail" (dict "field" "global.storage.existingClaim" "value" $existing "problem" "is set while storage.enabled=true would create a second claim" "fix" "--set storage.enabled=false to use the existing claim, or unset global.storage.existingClaim") -}}
{{- end -}}
{{- if and (not $v.storage.enabled) (not $existing) -}}
{{- include "verl-ppo.validate.required" (dict "value" $existing "field" "global.storage.existingClaim" "fix" "with storage.enabled=false every pod needs a ReadWriteMany claim: --set global.storage.existingClaim=<claim>") -}}
{{- end -}}
{{- if $v.storage.enabled -}}
{{- if eq $v.storage.type "tos" -}}
{{- range $key := list "bucket" "region" "endpoint" -}}
{{- include "verl-ppo.validate.required" (dict "value" (get $v.storage.tos $key) "field" (printf "storage.tos.%s" $key) "fix" (printf "--set storage.tos.%s=..." $key)) -}}
{{- end -}}
{{- include "verl-ppo.validate.required" (dict "value" $v.storage.tos.secretName "field" "storage.tos.secretName" "fix" "create a Secret with keys AccessKeyId and SecretAccessKey (kubectl create secret generic tos-credentials --from-literal=AccessKeyId=... --from-literal=SecretAccessKey=...) and --set storage.tos.secretName=tos-credentials") -}}
{{- else if eq $v.storage.type "nas" -}}
{{- include "verl-ppo.validate.required" (dict "value" $v.storage.nas.server "field" "storage.nas.server" "fix" "--set storage.nas.server=<NAS mount target address>") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* GPU counts and pod sizes against the GPU node type the values were made for. */}}
{{- define "verl-ppo.preflight.shape" -}}
{{- $v := .Values -}}
{{- $shape := $v.gpuShape -}}
{{- $gpu := $v.global.gpu -}}
{{- if gt (int $gpu.perNode) (int $shape.gpusPerNode) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "global.gpu.perNode" "value" $gpu.perNode "problem" (printf "exceeds the %d GPUs of a %s node (gpuShape.gpusPerNode)" (int $shape.gpusPerNode) $shape.name) "fix" (printf "use at most %d, or values for a larger GPU node type" (int $shape.gpusPerNode))) -}}
{{- end -}}
{{- $ray := $v.raycluster -}}
{{- if and (not $ray.head.trainsOnHead) (lt (int $gpu.nodes) 1) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "global.gpu.nodes" "value" $gpu.nodes "problem" "leaves no GPU worker with a CPU-only head" "fix" "use at least 1") -}}
{{- end -}}
{{- $workers := sub (int $gpu.nodes) (ternary 1 0 $ray.head.trainsOnHead) -}}
{{- $autoscaling := $ray.worker.autoscaling -}}
{{- if and $autoscaling.enabled (or (gt (int $autoscaling.minReplicas) $workers) (lt (int $autoscaling.maxReplicas) $workers)) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "raycluster.worker.autoscaling" "value" (printf "min %d, max %d" (int $autoscaling.minReplicas) (int $autoscaling.maxReplicas)) "problem" (printf "does not contain the %d workers training needs (global.gpu.nodes)" $workers) "fix" (printf "use minReplicas <= %d <= maxReplicas" $workers)) -}}
{{- end -}}
{{- $cpuLimit := int64 (include "verl-ppo.cpuMillis" $shape.allocatable.cpu) -}}
{{- $memoryLimit := int64 (include "verl-ppo.memoryMiB" $shape.allocatable.memory) -}}
{{- range $role := list "head" "worker" -}}
{{- $resources := (get $ray $role).resources -}}
{{- if gt (int64 (include "verl-ppo.cpuMillis" $resources.cpu)) $cpuLimit -}}
{{- include "verl-ppo.validate.fail" (dict "field" (printf "raycluster.%s.resources.cpu" $role) "value" $resources.cpu "problem" (printf "does not fit the %s allocatable CPU of a %s node (gpuShape.allocatable.cpu)" $shape.allocatable.cpu $shape.name) "fix" "lower it; the generator uses 80% of allocatable") -}}
{{- end -}}
{{- if gt (int64 (include "verl-ppo.memoryMiB" $resources.memory)) $memoryLimit -}}
{{- include "verl-ppo.validate.fail" (dict "field" (printf "raycluster.%s.resources.memory" $role) "value" $resources.memory "problem" (printf "does not fit the %s allocatable memory of a %s node (gpuShape.allocatable.memory)" $shape.allocatable.memory $shape.name) "fix" "lower it; the generator uses 80% of allocatable") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The dashboard Ingress (raycluster) routes global.tensorboard.ingressPath to TensorBoard's Service (observability). */}}
{{- define "verl-ppo.preflight.tensorboard" -}}
{{- $path := .Values.global.tensorboard.ingressPath -}}
{{- if and $path (not .Values.observability.enabled) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "global.tensorboard.ingressPath" "value" $path "problem" "routes to TensorBoard's Service, which observability.enabled=false does not create" "fix" "--set observability.enabled=true, or leave ingressPath empty") -}}
{{- end -}}
{{- end -}}
