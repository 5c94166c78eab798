{{/* The dashboard Ingress's own annotations (JSON): access control (nginx) or the listener (VKE ALB). Call with (dict "Values" .Values). */}}
{{- define "raycluster.ingressAnnotations" -}}
{{- $ingress := .Values.ingress -}}
{{- $access := $ingress.accessControl -}}
{{- $annotations := dict -}}
{{- if eq $ingress.provider "nginx" }}
{{- with $access.sourceRanges }}
{{- $_ := set $annotations "nginx.ingress.kubernetes.io/whitelist-source-range" (join "," .) }}
{{- end }}
{{- with $access.basicAuthSecret }}
{{- $_ := set $annotations "nginx.ingress.kubernetes.io/auth-type" "basic" }}
{{- $_ := set $annotations "nginx.ingress.kubernetes.io/auth-secret" . }}
{{- $_ := set $annotations "nginx.ingress.kubernetes.io/auth-realm" "Ray dashboard" }}
{{- end }}
{{- else if eq $ingress.provider "alb" }}
{{- /* VKE ALB: the listener follows the Ingress; HTTPS when TLS is configured. */ -}}
{{- $_ := set $annotations "ingress.vke.volcengine.com/loadbalancer-protocol" (ternary "https" "http" (not (empty $ingress.tls))) }}
{{- $_ := set $annotations "ingress.vke.volcengine.com/loadbalancer-port" (ternary "443" "80" (not (empty $ingress.tls))) }}
{{- end }}
{{- toJson $annotations -}}
{{- end -}}
