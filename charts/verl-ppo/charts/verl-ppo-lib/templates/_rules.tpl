{{/*
The rulebook's entry point: every rule that relates two or more values, checked at once, one failure
listing each broken rule with the field, its value, why, and the fix (Bitnami's validateValues habit).

Every chart calls it from templates/validate.yaml. Under the umbrella chart only the umbrella's call
runs (it sees every component's values); a subchart installed alone checks its own component and the
release-wide rules. Each component's rules are `<component>.rules` in that component's _rules.tpl;
they get (dict "Values" <its values, with global> "Release" "Capabilities" "prefix" "state" "present"),
name fields as prefix + their path, and report through verl-ppo.rule.
*/}}
{{- define "verl-ppo.validate" -}}
{{- if not (hasPrefix "verl-ppo/charts/" .Template.BasePath) -}}
{{- $umbrella := eq .Chart.Name "verl-ppo" -}}
{{- $present := dict -}}
{{- if $umbrella -}}
{{- range $name := list "storage" "raycluster" "ppo-job" "observability" -}}
{{- $section := index $.Values $name -}}
{{- if $section.enabled -}}
{{- $_ := set $present $name (set (deepCopy $section) "global" $.Values.global) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- $_ := set $present .Chart.Name .Values -}}
{{- end -}}
{{- $state := dict "findings" list -}}
{{- include "verl-ppo.rules.release" (dict "Values" .Values "Release" .Release "state" $state "present" $present "umbrella" $umbrella) -}}
{{- range $name, $values := $present -}}
{{- include (printf "%s.rules" $name) (dict "Values" $values "Release" $.Release "Capabilities" $.Capabilities "prefix" (ternary (printf "%s." $name) "" $umbrella) "state" $state "present" $present) -}}
{{- end -}}
{{- with $state.findings -}}
{{- $lines := list (printf "%s: %d value(s) to fix (each line: field=value: why. Fix: how):" $.Chart.Name (len .)) -}}
{{- range . -}}
{{- $lines = append $lines (printf "  - %s=%s: %s. Fix: %s" .field (ternary "\"\"" (toString .value) (eq (toString .value) "")) .problem .fix) -}}
{{- end -}}
{{- fail (printf "\n%s" (join "\n" $lines)) -}}
{{- end -}}
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
{{- $existing := $global.storage.existingClaim -}}
{{- $creates := hasKey .present "storage" -}}
{{- if and $creates $existing -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.storage.existingClaim" "value" $existing "problem" "is set while the storage component would create a second claim" "fix" (ternary "--set storage.enabled=false to mount the existing claim, or --set global.storage.existingClaim=''" "install the storage chart only to create a claim: leave global.storage.existingClaim empty" .umbrella)) -}}
{{- end -}}
{{- $mounts := or (hasKey .present "raycluster") (hasKey .present "ppo-job") (and (hasKey .present "observability") $global.tensorboard.enabled) -}}
{{- if and (not $creates) (not $existing) $mounts -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.storage.existingClaim" "value" "" "problem" (ternary "is empty with storage.enabled=false: the pods need a ReadWriteMany claim" "is empty: a component installed without the storage component mounts an existing ReadWriteMany claim" .umbrella) "fix" "--set global.storage.existingClaim=<claim>") -}}
{{- end -}}
{{- $path := $global.tensorboard.ingressPath -}}
{{- if and $path .umbrella (not (hasKey .present "observability")) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.ingressPath" "value" $path "problem" "routes to TensorBoard's Service, which observability.enabled=false does not create" "fix" "--set observability.enabled=true, or --set global.tensorboard.ingressPath=''") -}}
{{- end -}}
{{- end -}}
