{{/* The dashboard runs arbitrary code: an Ingress needs an access control or an explicit opt-out. */}}
{{- define "raycluster.validateIngress" -}}
{{- $ingress := .Values.ingress -}}
{{- $access := $ingress.accessControl -}}
{{- if and (ne $ingress.provider "nginx") (or $access.sourceRanges $access.basicAuthSecret) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "raycluster.ingress.accessControl" "value" $ingress.provider "problem" "sourceRanges and basicAuthSecret are applied through nginx annotations only" "fix" "with provider alb or other, restrict access on the load balancer (e.g. an ALB listener ACL) and --set raycluster.ingress.accessControl.enforcedExternally=true") -}}
{{- end -}}
{{- if not (or $access.sourceRanges $access.basicAuthSecret $access.enforcedExternally $ingress.allowUnauthenticated) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "raycluster.ingress.enabled" "value" true "problem" "exposes the Ray dashboard, which runs any job it is sent, without an access control" "fix" "set raycluster.ingress.accessControl.sourceRanges or .basicAuthSecret (nginx), or .enforcedExternally=true, or accept the risk with --set raycluster.ingress.allowUnauthenticated=true") -}}
{{- end -}}
{{- $policy := .Values.networkPolicy -}}
{{- if and $policy.enabled (not $policy.dashboardFrom) (not $policy.dashboardFromAnywhere) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "raycluster.networkPolicy.dashboardFrom" "value" "[]" "problem" "is empty while the Ingress is on: any pod could reach the dashboard port directly, past the Ingress's access control" "fix" "name the ingress controller's peers, e.g. --set-json 'raycluster.networkPolicy.dashboardFrom=[{\"namespaceSelector\":{\"matchLabels\":{\"kubernetes.io/metadata.name\":\"ingress-nginx\"}}}]' (an ipBlock of the load balancer's subnet for an ALB), or accept it with --set raycluster.networkPolicy.dashboardFromAnywhere=true") -}}
{{- end -}}
{{- end -}}

{{/* A NodePort or LoadBalancer head Service publishes the dashboard and the Ray client with no access control. */}}
{{- define "raycluster.validateHeadService" -}}
{{- $head := .Values.head -}}
{{- if and (ne $head.serviceType "ClusterIP") (not $head.allowUnauthenticatedService) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "raycluster.head.serviceType" "value" $head.serviceType "problem" "publishes the Ray dashboard and client ports, which run any code they are sent, outside the cluster without an access control" "fix" "keep ClusterIP and expose the dashboard through raycluster.ingress with an access control, or accept the risk with --set raycluster.head.allowUnauthenticatedService=true") -}}
{{- end -}}
{{- end -}}

{{/* raycluster.nccl holds NCCL settings only: a stray name is most likely a misplaced variable. */}}
{{- define "raycluster.validateNccl" -}}
{{- range $name, $value := .Values.nccl -}}
{{- if not (regexMatch "^NCCL_[A-Z0-9_]+$" $name) -}}
{{- include "verl-ppo.validate.fail" (dict "field" (printf "raycluster.nccl.%s" $name) "value" $value "problem" "is not an NCCL_* variable" "fix" "put other variables in raycluster.env") -}}
{{- end -}}
{{- end -}}
{{- end -}}
