{{/*
The chart's name. The objects' names are fixed (evictionrequest-apiserver,
evictionrequest-controller, ...), as the kustomize overlays name them, and
not prefixed with the release: the APIService, the webhook, the FlowSchemas
and the ClusterRoles are cluster-wide and named once per cluster.
*/}}
{{- define "evictionrequest.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name, for what is named after the release (NOTES.txt).
*/}}
{{- define "evictionrequest.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "evictionrequest.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The selector labels of a component: only app.kubernetes.io/name, as the
overlays select their pods, so that the chart and the overlays select the
same pods. Call with (dict "name" "evictionrequest-apiserver").
*/}}
{{- define "evictionrequest.selectorLabels" -}}
app.kubernetes.io/name: {{ .name }}
{{- end }}

{{/*
The labels of an object of a component: its selector labels, helm's
standard labels and commonLabels. Call with (dict "ctx" $ "name" "<component>").
*/}}
{{- define "evictionrequest.labels" -}}
helm.sh/chart: {{ include "evictionrequest.chart" .ctx }}
{{ include "evictionrequest.selectorLabels" . }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: {{ include "evictionrequest.name" .ctx }}
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The image of the project's components (one image holds every binary).
*/}}
{{- define "evictionrequest.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default (printf "v%s" .Chart.AppVersion)) }}
{{- end }}

{{/*
A component's topology spread constraints; a constraint without
labelSelector selects the component's pods. Call with
(dict "constraints" <list> "name" "<component>").
*/}}
{{- define "evictionrequest.topologySpreadConstraints" -}}
{{- $out := list }}
{{- range .constraints }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" (dict "app.kubernetes.io/name" $.name)) }}
{{- end }}
{{- $out = append $out $c }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
The spec of a PodDisruptionBudget: minAvailable or maxUnavailable, not both.
Call with (dict "pdb" <podDisruptionBudget values> "key" "<values path>").
*/}}
{{- define "evictionrequest.pdbSpec" -}}
{{- $min := "" }}
{{- if not (kindIs "invalid" .pdb.minAvailable) }}
{{- $min = toString .pdb.minAvailable }}
{{- end }}
{{- $max := "" }}
{{- if not (kindIs "invalid" .pdb.maxUnavailable) }}
{{- $max = toString .pdb.maxUnavailable }}
{{- end }}
{{- if and (ne $min "") (ne $max "") }}
{{- fail (printf "%s: set minAvailable or maxUnavailable, not both (set the other to \"\")" .key) }}
{{- end }}
{{- if ne $min "" }}
minAvailable: {{ include "evictionrequest.intOrString" .pdb.minAvailable }}
{{- else if ne $max "" }}
maxUnavailable: {{ include "evictionrequest.intOrString" .pdb.maxUnavailable }}
{{- else }}
{{- fail (printf "%s: set minAvailable or maxUnavailable" .key) }}
{{- end }}
{{- end }}

{{/*
A number as an integer, a string (such as 25%) quoted.
*/}}
{{- define "evictionrequest.intOrString" -}}
{{- if kindIs "string" . }}{{ quote . }}{{ else }}{{ int64 . }}{{ end }}
{{- end }}

{{/*
Whether the eviction API bridge is served by evictionrequest-apiserver
("coordination") or by evictionrequest-controller ("lifecycle"), when it is
enabled; "" otherwise.
*/}}
{{- define "evictionrequest.bridgeAPI" -}}
{{- if .Values.evictionBridge.enabled }}
{{- include "evictionrequest.componentAPI" (dict "ctx" . "api" .Values.evictionBridge.api "key" "evictionBridge.api") }}
{{- end }}
{{- end }}

{{/*
The arguments, volume mount and volume of the bridge's caller
authentication, for the component of api when it serves the bridge with
evictionBridge.clientAuthentication on; "" otherwise.
*/}}
{{- define "evictionrequest.bridgeAuthentication" -}}
{{- $auth := .ctx.Values.evictionBridge.clientAuthentication }}
{{- if and $auth.enabled (eq (include "evictionrequest.bridgeAPI" .ctx) .api) }}
{{- if not $auth.caBundle }}
{{- fail "evictionBridge.clientAuthentication.caBundle is required with evictionBridge.clientAuthentication.enabled: the CA of kube-apiserver's client certificate for the bridge" }}
{{- end }}
{{- if eq .part "args" }}
- --eviction-bridge-client-ca-file=/var/run/eviction-bridge/client-ca/ca.crt
{{- with $auth.allowedNames }}
- --eviction-bridge-allowed-names={{ join "," . }}
{{- end }}
{{- else if eq .part "volumeMount" }}
- name: eviction-bridge-client-ca
  mountPath: /var/run/eviction-bridge/client-ca
  readOnly: true
{{- else }}
- name: eviction-bridge-client-ca
  configMap:
    name: evictionrequest-eviction-bridge-client-ca
{{- end }}
{{- end }}
{{- end }}

{{/*
The API whose component runs the node drain, when it is enabled; ""
otherwise.
*/}}
{{- define "evictionrequest.nodeDrainAPI" -}}
{{- if .Values.nodeDrain.enabled }}
{{- include "evictionrequest.componentAPI" (dict "ctx" . "api" .Values.nodeDrain.api "key" "nodeDrain.api") }}
{{- end }}
{{- end }}

{{- define "evictionrequest.componentAPI" -}}
{{- $v := .ctx.Values }}
{{- $api := .api }}
{{- if eq $api "" }}
{{- $api = ternary "coordination" "lifecycle" $v.apis.coordination.enabled }}
{{- end }}
{{- if and (eq $api "coordination") (not $v.apis.coordination.enabled) }}
{{- fail (printf "%s is coordination, but apis.coordination.enabled is false" .key) }}
{{- end }}
{{- if and (eq $api "lifecycle") (not $v.apis.lifecycle.enabled) }}
{{- fail (printf "%s is lifecycle, but apis.lifecycle.enabled is false" .key) }}
{{- end }}
{{- $api }}
{{- end }}

{{/*
The node drain's arguments, when the component of api runs it.
*/}}
{{- define "evictionrequest.nodeDrainArgs" -}}
{{- $d := .ctx.Values.nodeDrain }}
{{- if eq (include "evictionrequest.nodeDrainAPI" .ctx) .api }}
- --enable-node-drain-controller
{{- if $d.drainOnMaintenancePlanned }}
- --drain-on-maintenance-planned
{{- end }}
{{- with $d.deadline }}
- --node-drain-deadline={{ . }}
{{- end }}
- --node-drain-on-deadline={{ $d.onDeadline }}
{{- if $d.maxConcurrentDrains }}
- --max-concurrent-node-drains={{ int64 $d.maxConcurrentDrains }}
{{- end }}
{{- $pool := toString ($d.maxConcurrentDrainsPerPool | default "") }}
{{- if ne (empty $d.poolLabel) (eq $pool "") }}
{{- fail "nodeDrain.poolLabel and nodeDrain.maxConcurrentDrainsPerPool go together: set both or neither" }}
{{- end }}
{{- with $d.poolLabel }}
- --node-drain-pool-label={{ . }}
- --max-concurrent-node-drains-per-pool={{ $pool }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The matchConditions expression of the bridge's webhook: the serving
component's own service account and evictionBridge.exemptUsers pass.
*/}}
{{- define "evictionrequest.bridgeExemptExpression" -}}
{{- $users := list (printf "system:serviceaccount:%s:%s" .ctx.Release.Namespace .serviceAccount) }}
{{- range .ctx.Values.evictionBridge.exemptUsers }}
{{- $users = append $users . }}
{{- end }}
{{- $quoted := list }}
{{- range $users }}
{{- $quoted = append $quoted (printf "'%s'" .) }}
{{- end }}
{{- printf "!(request.userInfo.username in [%s])" (join ", " $quoted) }}
{{- end }}
