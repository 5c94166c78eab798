{{/* The labels KubeRay's own chart (kuberay-operator) gives its operator pod (its nameOverride and
     componentOverride): raycluster.networkPolicy.kubeRayOperator.podLabels when that is empty. */}}
{{- define "raycluster.kubeRayOperatorPodLabels" -}}
app.kubernetes.io/name: kuberay-operator
app.kubernetes.io/component: kuberay-operator
{{- end -}}


{{/* Where KubeRay's operator runs (JSON {"namespaces": [...], "source": ...}): raycluster.networkPolicy.kubeRayOperator.namespace
     when set ("value"); else the namespaces of the pods that carry the operator's labels (podLabels, or KubeRay's chart's),
     looked up at install and upgrade as the queue rules read live objects ("lookup"); where nothing is found (helm
     template has no cluster) default, KubeRay's guide's, assumed ("assumed", which NOTES names). Call with a context
     whose .Values is the raycluster section. */}}
{{- define "raycluster.kubeRayOperatorNamespaces" -}}
{{- $operator := .Values.networkPolicy.kubeRayOperator -}}
{{- if $operator.namespace -}}
{{- dict "namespaces" (list (toString $operator.namespace)) "source" "value" | toJson -}}
{{- else -}}
{{- $labels := $operator.podLabels | default (include "raycluster.kubeRayOperatorPodLabels" . | fromYaml) -}}
{{- $found := list -}}
{{- range (lookup "v1" "Pod" "" "").items | default list -}}
{{- $podLabels := .metadata.labels | default dict -}}
{{- $matches := true -}}
{{- range $key, $value := $labels -}}
{{- if or (not (hasKey $podLabels $key)) (ne (toString (get $podLabels $key)) (toString $value)) }}{{ $matches = false }}{{ end -}}
{{- end -}}
{{- if $matches }}{{ $found = append $found .metadata.namespace }}{{ end -}}
{{- end -}}
{{- if $found -}}
{{- dict "namespaces" (uniq $found | sortAlpha) "source" "lookup" | toJson -}}
{{- else -}}
{{- dict "namespaces" (list "default") "source" "assumed" | toJson -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The NetworkPolicy's peers of KubeRay's operator (YAML list): its pods in each namespace it was found in, every
     name and label printed as YAML text (a namespace 1234 or true stays a string). */}}
{{- define "raycluster.kubeRayOperatorPeers" -}}
{{- $operator := .Values.networkPolicy.kubeRayOperator -}}
{{- $podLabels := $operator.podLabels | default (include "raycluster.kubeRayOperatorPodLabels" . | fromYaml) -}}
{{- $peers := list -}}
{{- range (include "raycluster.kubeRayOperatorNamespaces" . | fromJson).namespaces -}}
{{- $namespace := dict "matchLabels" (dict "kubernetes.io/metadata.name" (toString .)) -}}
{{- $peers = append $peers (dict "namespaceSelector" $namespace "podSelector" (dict "matchLabels" $podLabels)) -}}
{{- end -}}
{{- toYaml $peers -}}
{{- end -}}
