{{/* Chart name, truncated to 63 characters (a DNS label). */}}
{{- define "servegate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-qualified name; leaves room for the suffixes added below ("-gateway-admin", "-redis"). */}}
{{- define "servegate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "servegate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every resource; pass a dict with "ctx" (the root) and "component". */}}
{{- define "servegate.labels" -}}
helm.sh/chart: {{ include "servegate.chart" .ctx }}
{{ include "servegate.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end }}

{{- define "servegate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "servegate.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "servegate.gatewayImage" -}}
{{- printf "%s:%s" .Values.gateway.image.repository (default .Chart.AppVersion .Values.gateway.image.tag) }}
{{- end }}

{{/* Whether the gateways share state in Redis (bundled or external). */}}
{{- define "servegate.redisEnabled" -}}
{{- if or .Values.redis.enabled .Values.redis.external.uri }}true{{ end }}
{{- end }}

{{/* The Redis URI the gateway uses; $(REDIS_PASSWORD) is expanded by Kubernetes from the secret. */}}
{{- define "servegate.redisUri" -}}
{{- if .Values.redis.enabled }}
{{- printf "redis://%s-redis:6379" (include "servegate.fullname" .) }}
{{- else if .Values.redis.external.existingSecret }}
{{- regexReplaceAll "^(rediss?://)" .Values.redis.external.uri "${1}:$$(REDIS_PASSWORD)@" }}
{{- else }}
{{- .Values.redis.external.uri }}
{{- end }}
{{- end }}

{{/*
A model container's resource name: "<fullname>-<model>-<version>", with "." and "_" (allowed in
Servegate names, not in Kubernetes ones) turned into "-", at most 63 characters.
*/}}
{{- define "servegate.modelName" -}}
{{- printf "%s-%s-%s" (include "servegate.fullname" .ctx) .model.name (toString .model.version) | replace "." "-" | replace "_" "-" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "servegate.serviceAccountName" -}}
{{- printf "%s-gateway" (include "servegate.fullname" .) }}
{{- end }}

{{/* The Secret holding the fleet's shared secret: the user's, or the one the chart makes. */}}
{{- define "servegate.fleetSecretName" -}}
{{- default (printf "%s-fleet" (include "servegate.fullname" .)) .Values.gateway.fleetSecret.existingSecret }}
{{- end }}
