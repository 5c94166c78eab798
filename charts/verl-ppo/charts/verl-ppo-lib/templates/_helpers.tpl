{{/* image reference: (dict "image" <component image, may be empty> "global" .Values.global) */}}
{{- define "verl-ppo.image" -}}
{{- $image := mergeOverwrite (deepCopy .global.image) (.image | default dict) -}}
{{- printf "%s:%s" $image.repository $image.tag -}}
{{- end -}}

{{- define "verl-ppo.imagePullPolicy" -}}
{{- $image := mergeOverwrite (deepCopy .global.image) (.image | default dict) -}}
{{- $image.pullPolicy -}}
{{- end -}}

{{/* imagePullSecrets block from global.imagePullSecrets (a list of Secret names). */}}
{{- define "verl-ppo.imagePullSecrets" -}}
{{- with .Values.global.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* One POSIX-shell word: wraps in single quotes, escaping embedded ones. */}}
{{- define "verl-ppo.shellQuote" -}}
{{- printf "'%s'" (replace "'" "'\\''" (toString .)) -}}
{{- end -}}

{{/* CPU quantity ("30", "1.5", "500m") in millicores, for fit checks. */}}
{{- define "verl-ppo.cpuMillis" -}}
{{- $q := toString . -}}
{{- if hasSuffix "m" $q -}}
{{- trimSuffix "m" $q | float64 | int64 -}}
{{- else -}}
{{- mulf (float64 $q) 1000 | int64 -}}
{{- end -}}
{{- end -}}

{{/* Memory quantity ("100Gi", "512Mi", "1T", bytes) in MiB, for fit checks. */}}
{{- define "verl-ppo.memoryMiB" -}}
{{- $q := toString . -}}
{{- $number := regexFind "^[0-9.]+" $q -}}
{{- $suffix := trimPrefix $number $q -}}
{{- $perMiB := dict "" 0.00000095367431640625 "Ki" 0.0009765625 "Mi" 1.0 "Gi" 1024.0 "Ti" 1048576.0 "k" 0.0009536743164 "K" 0.0009536743164 "M" 0.95367431640625 "G" 953.67431640625 "T" 953674.31640625 -}}
{{- mulf (float64 $number) (get $perMiB $suffix) | int64 -}}
{{- end -}}
