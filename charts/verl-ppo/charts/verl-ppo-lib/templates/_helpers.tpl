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

{{/*
Where a value lands, and the one template that makes it arrive there literally.
*/}}

{{/* The exact text of a scalar. Helm reads values files into float64, and Go prints a whole float64 of a
     million or more in e-notation (8388608 -> 8.388608e+06): whole numbers print as integers here. */}}
{{- define "verl-ppo.scalar" -}}
{{- if and (kindIs "float64" .) (eq (floor .) .) -}}
{{- int64 . -}}
{{- else -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{/* One POSIX-shell word: wraps in single quotes, escaping embedded ones. */}}
{{- define "verl-ppo.shellQuote" -}}
{{- printf "'%s'" (replace "'" "'\\''" (include "verl-ppo.scalar" .)) -}}
{{- end -}}

{{/* One word of a shell line that another program reads too (KubeRay's `ray start` line for rayStartParams:
     KubeRay itself turns true/false into switches and reads numbers): bare when it holds only characters
     no shell interprets, else quoted by verl-ppo.shellQuote. */}}
{{- define "verl-ppo.shellWord" -}}
{{- $word := include "verl-ppo.scalar" . -}}
{{- if regexMatch "^[-A-Za-z0-9_./:=@%+,]+$" $word -}}
{{- $word -}}
{{- else -}}
{{- include "verl-ppo.shellQuote" $word -}}
{{- end -}}
{{- end -}}

{{/* One Hydra override value that arrives as the string it is: bare when Hydra reads it as that same string
     (a path or a name), else double-quoted, with quotes and interpolations (${...}) escaped. Quoting also
     keeps null, true, nan, inf and numbers-as-names strings. The schema keeps backslashes and control
     characters out of every string that lands here. */}}
{{- define "verl-ppo.hydraValue" -}}
{{- $text := include "verl-ppo.scalar" . -}}
{{- if and (regexMatch "^[A-Za-z_/][-A-Za-z0-9_./]*$" $text) (not (has (lower $text) (list "null" "true" "false" "nan" "inf"))) -}}
{{- $text -}}
{{- else -}}
{{- printf "\"%s\"" ($text | replace "\"" "\\\"" | replace "${" "\\${") -}}
{{- end -}}
{{- end -}}

{{/* CPU quantity ("30", "1.5", "500m") in millicores, for fit checks. */}}
{{- define "verl-ppo.cpuMillis" -}}
{{- $q := include "verl-ppo.scalar" . -}}
{{- if hasSuffix "m" $q -}}
{{- trimSuffix "m" $q | float64 | int64 -}}
{{- else -}}
{{- mulf (float64 $q) 1000 | int64 -}}
{{- end -}}
{{- end -}}

{{/* Memory quantity ("100Gi", "512Mi", "1T", bytes, "107e9") in MiB, for fit checks. */}}
{{- define "verl-ppo.memoryMiB" -}}
{{- $q := include "verl-ppo.scalar" . -}}
{{- $number := regexFind "^[0-9.]+([eE][0-9]+)?" $q -}}
{{- $suffix := trimPrefix $number $q -}}
{{- $perMiB := dict "" 0.00000095367431640625 "Ki" 0.0009765625 "Mi" 1.0 "Gi" 1024.0 "Ti" 1048576.0
  "k" 0.0009536743164 "K" 0.0009536743164 "M" 0.95367431640625 "G" 953.67431640625 "T" 953674.31640625 -}}
{{- mulf (float64 $number) (get $perMiB $suffix) | int64 -}}
{{- end -}}

{{/* "true" when an environment variable's name looks like a credential (WANDB_API_KEY, HF_TOKEN, *_SECRET*, DB_PASS,
     *_PASSWORD, *_KEY, *_KEY_ID ...): such a value comes from a Secret, never from values. Call with (dict "state" .state
     "text" <the name>): the patterns are the rules' state's (the umbrella's files/credentials.yaml, read by verl-ppo.validate). */}}
{{- define "verl-ppo.looksLikeCredential" -}}
{{- $name := toString .text -}}
{{- range .state.credentials.names }}{{ if regexMatch . $name }}true{{ break }}{{ end }}{{ end -}}
{{- end -}}

{{/* The shape of credential a value has whatever its variable's name (a token of a well-known service, a private key,
     a URL with a password, a long random key: files/credentials.yaml), or "". Call with (dict "state" .state "text" <the value>). */}}
{{- define "verl-ppo.looksLikeCredentialValue" -}}
{{- $value := toString .text -}}
{{- range .state.credentials.values -}}
{{- $matches := regexMatch .pattern $value -}}
{{- range .requires }}{{ $matches = and $matches (regexMatch . $value) }}{{ end -}}
{{- if $matches }}{{ .shape }}{{ break }}{{ end -}}
{{- end -}}
{{- end -}}
