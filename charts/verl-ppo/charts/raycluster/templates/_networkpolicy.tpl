{{/* The labels KubeRay's own chart (kuberay-operator) gives its operator pod (its nameOverride and
     componentOverride): raycluster.networkPolicy.kubeRayOperator.podLabels when that is empty. */}}
{{- define "raycluster.kubeRayOperatorPodLabels" -}}
app.kubernetes.io/name: kuberay-operator
app.kubernetes.io/component: kuberay-operator
{{- end -}}
