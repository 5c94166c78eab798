{{/* The head's rollout Prometheus (global.rolloutMetrics): veRL 0.9's rollout servers listen on ports they pick
     per run, which a PodMonitor cannot name, so veRL writes their addresses as a scrape job (rollout) into
     verl-ppo.rolloutPrometheusFile on every Ray node. This sidecar scrapes what that file lists, reloading it
     when it changes (until veRL writes it, an empty configuration), and the head's PodMonitor federates
     job="rollout" from it. Call with the chart context. */}}
{{- define "raycluster.rolloutPrometheusContainer" -}}
{{- $settings := .Values.global.rolloutMetrics -}}
{{- $port := include "verl-ppo.port" (dict "name" "rolloutPrometheus") }}
{{- /* The Ray container's /tmp/ray, elsewhere: veRL's file also lists Ray's nodes (a file_sd under /tmp/ray),
       which the head's PodMonitor already scrapes; here that file is absent, so only veRL's servers are. */}}
{{- $rayTmp := "/ray-tmp" }}
- name: rollout-prometheus
  image: {{ include "verl-ppo.image" (dict "image" $settings.image "global" .Values.global) | quote }}
  imagePullPolicy: {{ include "verl-ppo.imagePullPolicy" (dict "image" $settings.image "global" .Values.global) }}
  command:
    - /bin/sh
    - -c
    # veRL (another user, maybe) rewrites the file in place: the directory and the file are left writable to it.
    - |-
      if [ ! -s "$SCRAPE_CONFIG" ]; then
        mkdir -p -m 0777 "${SCRAPE_CONFIG%/*}" && printf 'scrape_configs: []\n' > "$SCRAPE_CONFIG" && chmod 0666 "$SCRAPE_CONFIG"
      fi
      exec prometheus --config.file="$SCRAPE_CONFIG" --config.auto-reload --config.auto-reload-interval=10s \
        --storage.tsdb.path="$DATA_DIR" --storage.tsdb.retention.time="$RETENTION" --web.listen-address=":$PORT"
  env:
    - name: SCRAPE_CONFIG
      value: {{ printf "%s%s" $rayTmp (include "verl-ppo.rolloutPrometheusFile" . | trimPrefix "/tmp/ray") | quote }}
    - name: DATA_DIR
      value: /prometheus
    - name: RETENTION
      value: {{ $settings.retention | quote }}
    - name: PORT
      value: {{ $port | quote }}
  ports:
    - name: rollout-prom
      containerPort: {{ $port }}
  readinessProbe:
    httpGet:
      path: /-/ready
      port: rollout-prom
  resources:
    {{- toYaml $settings.resources | nindent 4 }}
  securityContext:
    {{- include "verl-ppo.restrictedContainerSecurityContext" (dict) | nindent 4 }}
    # Prometheus' image names its user (nobody) without a number, which runAsNonRoot cannot check.
    runAsNonRoot: true
    runAsUser: 65534
  volumeMounts:
    - name: log-volume
      mountPath: {{ $rayTmp }}
    - name: rollout-prometheus
      mountPath: /prometheus
{{- end -}}

{{/* Its volume (the samples it keeps for the federating Prometheus). */}}
{{- define "raycluster.rolloutPrometheusVolume" -}}
- name: rollout-prometheus
  emptyDir: {}
{{- end -}}
