{{/*
The chart's name. The objects' names are fixed (evictionrequest-apiserver,
evictionrequest-controller, ...) and not prefixed with the release: the
APIService, the webhook, the FlowSchemas and the ClusterRoles are
cluster-wide and named once per cluster, so the chart installs once per
cluster (evictionrequest.oneReleasePerCluster refuses a second release).
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
The selector labels of a component: its name and the release's instance,
as Helm's convention has them. Call with
(dict "ctx" $ "name" "evictionrequest-apiserver").
*/}}
{{- define "evictionrequest.selectorLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- end }}

{{/*
The labels of an object of a component: its selector labels, helm's
standard labels and commonLabels. Call with (dict "ctx" $ "name" "<component>").
*/}}
{{- define "evictionrequest.labels" -}}
helm.sh/chart: {{ include "evictionrequest.chart" .ctx }}
{{ include "evictionrequest.selectorLabels" . }}
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
(dict "ctx" $ "constraints" <list> "name" "<component>").
*/}}
{{- define "evictionrequest.topologySpreadConstraints" -}}
{{- $out := list }}
{{- range .constraints }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" (include "evictionrequest.selectorLabels" $ | fromYaml)) }}
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
evictionBridge.clientAuthentication on; the argument that lets it serve any
caller when the admin set allowUnauthenticatedCallers; "" otherwise. A
bridge with neither fails the render: it would act, with its own rights,
for whoever reaches its port.
*/}}
{{- define "evictionrequest.bridgeAuthentication" -}}
{{- $auth := .ctx.Values.evictionBridge.clientAuthentication }}
{{- $serves := eq (include "evictionrequest.bridgeAPI" .ctx) .api }}
{{- if and $serves (not $auth.enabled) }}
{{- if not $auth.allowUnauthenticatedCallers }}
{{- fail "evictionBridge.enabled needs evictionBridge.clientAuthentication.enabled=true with the CA of kube-apiserver's client certificate for the bridge in evictionBridge.clientAuthentication.caBundle (docs/eviction-bridge.md, \"Authenticating kube-apiserver\"), so that the bridge serves kube-apiserver only; or, to serve whoever reaches its port, evictionBridge.clientAuthentication.allowUnauthenticatedCallers=true" }}
{{- end }}
{{- if eq .part "args" }}
- --eviction-bridge-allow-unauthenticated-callers
{{- end }}
{{- else if and $serves $auth.enabled }}
{{- if $auth.allowUnauthenticatedCallers }}
{{- fail "evictionBridge.clientAuthentication.allowUnauthenticatedCallers contradicts evictionBridge.clientAuthentication.enabled: set one of them" }}
{{- end }}
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

{{/*
The serving certificate of mode generated, as JSON: ca.crt, ca.key (the
key of the CA, with which evictionrequest-apiserver's leader renews the
certificate), tls.crt and tls.key (PEM) and notAfter (Unix seconds). One per render, whichever
template asks first (the Secret, the APIService, the Deployment's checksum):
computed once and kept in .Values._generatedServingCertificate, which the
schema, checked before the templates run, never sees. The Secret of an
earlier install (which the leader renews) is kept unless it expires within
renewBeforeDays.
*/}}
{{- define "evictionrequest.generatedServingCertificate" -}}
{{- if not (hasKey .Values "_generatedServingCertificate") }}
{{- $cert := .Values.apiserver.servingCertificate }}
{{- $now := now | unixEpoch | atoi }}
{{- $kept := dict }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $cert.secretName }}
{{- if and $existing $existing.data }}
{{- $notAfter := get ($existing.metadata.annotations | default dict) "evictionrequest.github.io/not-after" | default "0" | atoi }}
{{- if and (hasKey $existing.data "ca.crt") (gt $notAfter (add $now (mul $cert.generated.renewBeforeDays 86400))) }}
{{- $kept = dict "ca.crt" (index $existing.data "ca.crt" | b64dec) "tls.crt" (index $existing.data "tls.crt" | b64dec) "tls.key" (index $existing.data "tls.key" | b64dec) "notAfter" $notAfter }}
{{- if hasKey $existing.data "ca.key" }}
{{- $_ := set $kept "ca.key" (index $existing.data "ca.key" | b64dec) }}
{{- end }}
{{- end }}
{{- end }}
{{- if not $kept }}
{{- $days := int $cert.generated.validityDays }}
{{- $host := printf "evictionrequest-apiserver.%s.svc" .Release.Namespace }}
{{- $ca := genCA "evictionrequest-apiserver-ca" $days }}
{{- $serving := genSignedCert $host nil (list $host (printf "%s.cluster.local" $host)) $days $ca }}
{{- $kept = dict "ca.crt" $ca.Cert "ca.key" $ca.Key "tls.crt" $serving.Cert "tls.key" $serving.Key "notAfter" (add $now (mul $days 86400)) }}
{{- end }}
{{- $_ := set .Values "_generatedServingCertificate" $kept }}
{{- end }}
{{- toJson .Values._generatedServingCertificate }}
{{- end }}

{{/*
Fails when another release, or an overlay of artifacts/, installed the
product in this cluster already: its cluster-wide objects (the APIService,
the FlowSchemas, the admission policies, the PriorityClass it creates) are named once
per cluster, and two installs would fight over them. Read with lookup, so
helm install and upgrade check it; helm template cannot.
*/}}
{{- define "evictionrequest.oneReleasePerCluster" -}}
{{- $objects := list
  (list "apiregistration.k8s.io/v1" "APIService" "v1alpha1.coordination.k8s.io")
  (list "flowcontrol.apiserver.k8s.io/v1" "FlowSchema" "evictionrequest-apiserver")
  (list "flowcontrol.apiserver.k8s.io/v1" "FlowSchema" "evictionrequest-controller")
  (list "admissionregistration.k8s.io/v1" "ValidatingAdmissionPolicy" "evictionrequest-node-drain")
  (list "admissionregistration.k8s.io/v1" "ValidatingAdmissionPolicy" "evictionrequest-pod-interceptors") }}
{{- /* A PriorityClass the chart only uses (system-cluster-critical) is no one's. */}}
{{- if $.Values.priorityClass.create }}
{{- $objects = append $objects (list "scheduling.k8s.io/v1" "PriorityClass" $.Values.priorityClass.name) }}
{{- end }}
{{- range $object := $objects }}
{{- $found := lookup (index $object 0) (index $object 1) "" (index $object 2) }}
{{- if $found }}
{{- $annotations := $found.metadata.annotations | default dict }}
{{- $release := get $annotations "meta.helm.sh/release-name" }}
{{- $namespace := get $annotations "meta.helm.sh/release-namespace" }}
{{- if not $release }}
{{- fail (printf "%s %s exists and no Helm release owns it (an overlay of artifacts/, or kubectl?): the chart installs once per cluster; delete that install first" (index $object 1) (index $object 2)) }}
{{- else if or (ne $release $.Release.Name) (ne $namespace $.Release.Namespace) }}
{{- fail (printf "the chart is installed already as release %s in namespace %s (%s %s is its): it installs once per cluster, its APIService, policies and PriorityClass being cluster-wide; upgrade that release instead" $release $namespace (index $object 1) (index $object 2)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The RBAC of a component that serves /metrics with delegated authentication
and authorization, as kube-controller-manager does (name: its service
account): system:auth-delegator (TokenReview, SubjectAccessReview), and
read access to kube-system/extension-apiserver-authentication (the client
CA and request header settings), by a ClusterRole limited to that name
rather than a RoleBinding in kube-system, so that no object of the chart
lives outside the release namespace.
*/}}
{{- define "evictionrequest.delegatedAuthRBAC" -}}
{{- $ns := .ctx.Release.Namespace }}
# Delegated authentication (TokenReview) and authorization
# (SubjectAccessReview) of the callers of /metrics.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ .name }}:system:auth-delegator
  labels:
    {{- include "evictionrequest.labels" (dict "ctx" .ctx "name" .name) | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:auth-delegator
subjects:
- kind: ServiceAccount
  name: {{ .name }}
  namespace: {{ $ns }}
---
# The client CA and request header settings kube-apiserver publishes in
# kube-system/extension-apiserver-authentication: that one ConfigMap by name.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .name }}:extension-apiserver-authentication-reader
  labels:
    {{- include "evictionrequest.labels" (dict "ctx" .ctx "name" .name) | nindent 4 }}
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  resourceNames: ["extension-apiserver-authentication"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ .name }}:extension-apiserver-authentication-reader
  labels:
    {{- include "evictionrequest.labels" (dict "ctx" .ctx "name" .name) | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ .name }}:extension-apiserver-authentication-reader
subjects:
- kind: ServiceAccount
  name: {{ .name }}
  namespace: {{ $ns }}
{{- end }}

{{/*
The ingress rule of a component's metrics port: from the scrapers of
networkPolicy.metricsScrapers only; none when it is empty (an empty from
would admit every source). kubelet's probes, from the node, are always
allowed.
*/}}
{{- define "evictionrequest.metricsIngress" -}}
{{- with .Values.networkPolicy.metricsScrapers }}
- ports:
  - port: 8080
  from:
    {{- toYaml . | nindent 4 }}
{{- end }}
{{- end }}

{{/*
The ingress rule of a port kube-apiserver calls (the APIService, a
webhook): from networkPolicy.kubeAPIServer, or from anywhere when it is
empty, kube-apiserver often running outside the pod network.
*/}}
{{- define "evictionrequest.kubeAPIServerIngress" -}}
- ports:
  - port: 8443
  {{- with .Values.networkPolicy.kubeAPIServer }}
  from:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{/*
evictionrequest.controllersArg is the one --controllers argument of the
binary of an API (.api: coordination for the server, lifecycle for
evictionrequest-controller), in kube-controller-manager's syntax: '*' and
the controllers off by default that the values turn on (the node drain, the
bridge), less, with controller.actorsOnly, the two that kube-controller-
manager runs from 1.38 on. Nothing when it says only '*'. One argument,
because a second --controllers adds to the first: the list must keep '*'.
*/}}
{{- define "evictionrequest.controllersArg" -}}
{{- $names := list "*" }}
{{- if and (eq .api "lifecycle") .ctx.Values.controller.actorsOnly }}
{{- $names = append $names "-evictionrequest-controller" }}
{{- $names = append $names "-imperative-eviction-responder-controller" }}
{{- end }}
{{- if eq (include "evictionrequest.nodeDrainAPI" .ctx) .api }}
{{- $names = append $names "evictionrequest-node-drain" }}
{{- end }}
{{- if eq (include "evictionrequest.bridgeAPI" .ctx) .api }}
{{- $names = append $names "eviction-bridge" }}
{{- end }}
{{- if gt (len $names) 1 }}
- --controllers={{ join "," $names }}
{{- end }}
{{- end }}
