{{/* The static PersistentVolume (tos, nas). PVs are cluster-scoped: the namespace is part of the name, so
     releases of the same name in two namespaces get a volume each (the CSI volume handle is the same string). */}}
{{- define "storage.volumeName" -}}
{{- printf "%s-%s" .Release.Namespace (include "verl-ppo.claimName" .) -}}
{{- end -}}
