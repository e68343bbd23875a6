{{/*
The participant rules (docs/participants.md): participants.surge, when
the surge interceptor is installed, and participants.rules, each checked
as the API it adds to checks the pods' declarations, and cut to the APIs
the release serves. Returns them as a JSON list of
{name, interceptor, turn, responder: {name, priority}, namespaceSelector,
podSelector, ownerKinds, skipPodsWithOwnParticipants}, interceptor or
responder left out where its API is not served. A rule that would make a pod invalid, or that adds nothing
the release serves, fails the render with what to change.
*/}}
{{- define "evictionrequest.participantRules" -}}
{{- $v := .Values }}
{{- $p := $v.participants }}
{{- $rules := list }}
{{- if and $p.enabled $v.surgeInterceptor.enabled $p.surge.enabled }}
{{- $s := $p.surge }}
{{- $rules = append $rules (dict "key" "participants.surge" "name" "surge" "interceptor" $s.interceptor "turn" $s.turn
    "responder" (dict "name" $s.responder.name "priority" $s.responder.priority)
    "namespaceSelector" $s.namespaceSelector "podSelector" $s.podSelector "ownerKinds" (list "Deployment")
    "skipPodsWithOwnParticipants" $s.skipPodsWithOwnParticipants) }}
{{- end }}
{{- if $p.enabled }}
{{- range $i, $r := $p.rules }}
{{- $rules = append $rules (merge (dict "key" (printf "participants.rules[%d]" $i)) $r) }}
{{- end }}
{{- end }}
{{- $names := dict }}
{{- $responders := dict }}
{{- $interceptors := dict }}
{{- $out := list }}
{{- range $r := $rules }}
{{- include "evictionrequest.checkParticipantRule" $r }}
{{- if hasKey $names $r.name }}
{{- fail (printf "%s: the rule name %q is taken by %s; each rule is its own MutatingAdmissionPolicy evictionrequest-participants-NAME" $r.key $r.name (get $names $r.name)) }}
{{- end }}
{{- $_ := set $names $r.name $r.key }}
{{- $rule := dict "name" $r.name "turn" ($r.turn | default "Last") "namespaceSelector" ($r.namespaceSelector | default dict) "podSelector" ($r.podSelector | default dict) "ownerKinds" ($r.ownerKinds | default list) "skipPodsWithOwnParticipants" ($r.skipPodsWithOwnParticipants | default false) }}
{{- if and $r.interceptor $v.apis.coordination.enabled }}
{{- $_ := set $rule "interceptor" $r.interceptor }}
{{- $_ := set $interceptors $r.interceptor true }}
{{- end }}
{{- if and $r.responder $v.apis.lifecycle.enabled }}
{{- $_ := set $rule "responder" (dict "name" $r.responder.name "priority" (int64 $r.responder.priority)) }}
{{- $_ := set $responders $r.responder.name true }}
{{- end }}
{{- if not (or (hasKey $rule "interceptor") (hasKey $rule "responder")) }}
{{- fail (printf "%s (rule %s) adds nothing this release serves: an interceptor needs apis.coordination.enabled, a responder apis.lifecycle.enabled" $r.key $r.name) }}
{{- end }}
{{- $out = append $out $rule }}
{{- end }}
{{- if gt (len $responders) 10 }}
{{- fail (printf "participants: the rules add %d different lifecycle.k8s.io responders (%s); a pod holds at most 10 spec.evictionResponders (kube-apiserver's limit), so at most 10 may be added by rules" (len $responders) (keys $responders | sortAlpha | join ", ")) }}
{{- end }}
{{- if gt (len $interceptors) 100 }}
{{- fail (printf "participants: the rules add %d different interceptors; a pod lists at most 100 in its evictionrequest.coordination.k8s.io/interceptors annotation" (len $interceptors)) }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{/*
Checks one rule as the APIs check what a pod declares: the interceptor as
evictionrequest-apiserver and the policy evictionrequest-pod-interceptors
do (a DNS subdomain; in the k8s.io domain only Kubernetes' own roles), the
responder as kube-apiserver validates spec.evictionResponders (a
domain-prefixed key outside k8s.io and kubernetes.io, a priority of 1000
to 100000: 0-999 are reserved for *.k8s.io responders).
*/}}
{{- define "evictionrequest.checkParticipantRule" -}}
{{- $dnsLabel := "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" }}
{{- $dnsSubdomain := "^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" }}
{{- $qualifiedName := "^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$" }}
{{- $allowed := list "daemonset.apps.k8s.io" "deployment.apps.k8s.io" "horizontalpodautoscaler.autoscaling.k8s.io" "nodemaintenance.k8s.io" "replicaset.apps.k8s.io" "statefulset.apps.k8s.io" }}
{{- if not (and .name (regexMatch $dnsLabel .name) (le (len .name) 63)) }}
{{- fail (printf "%s.name %q: a rule needs a name that is a DNS label (lowercase alphanumerics and -, at most 63 characters): it names its policy and its mark on the pods" .key (.name | default "")) }}
{{- end }}
{{- if not (or .interceptor .responder) }}
{{- fail (printf "%s (rule %s): name the participant to add: interceptor (coordination.k8s.io), responder (lifecycle.k8s.io), or both" .key .name) }}
{{- end }}
{{- if and (hasKey . "skipPodsWithOwnParticipants") (not (kindIs "bool" .skipPodsWithOwnParticipants)) (not (kindIs "invalid" .skipPodsWithOwnParticipants)) }}
{{- fail (printf "%s.skipPodsWithOwnParticipants %v: true (leave alone the pods that declare participants of their own) or false (add the participant to every pod the rule selects)" .key .skipPodsWithOwnParticipants) }}
{{- end }}
{{- with .interceptor }}
{{- if not (and (regexMatch $dnsSubdomain .) (le (len .) 253)) }}
{{- fail (printf "%s.interceptor %q: an interceptor's name is a DNS subdomain (lowercase alphanumerics, - and ., at most 253 characters), as the pods' evictionrequest.coordination.k8s.io/interceptors annotation lists them" $.key .) }}
{{- end }}
{{- if and (or (eq . "k8s.io") (hasSuffix ".k8s.io" .)) (not (has . $allowed)) }}
{{- fail (printf "%s.interceptor %q: names in the k8s.io domain are reserved for Kubernetes components (allowed: %s)" $.key . (join ", " $allowed)) }}
{{- end }}
{{- end }}
{{- with .responder }}
{{- $prefix := "" }}
{{- $name := .name | default "" }}
{{- if contains "/" $name }}
{{- $parts := splitn "/" 2 $name }}
{{- $prefix = $parts._0 }}
{{- $name = $parts._1 }}
{{- end }}
{{- if not (and $prefix (regexMatch $dnsSubdomain $prefix) (le (len $prefix) 253) (regexMatch $qualifiedName $name) (le (len $name) 63)) }}
{{- fail (printf "%s.responder.name %q: a responder's name is a domain-prefixed key such as example.com/backup (a DNS subdomain, /, then at most 63 alphanumerics, -, _ or .), as kube-apiserver validates spec.evictionResponders" $.key (.name | default "")) }}
{{- end }}
{{- range $reserved := list "k8s.io" "kubernetes.io" }}
{{- if or (eq $prefix $reserved) (hasSuffix (printf ".%s" $reserved) $prefix) }}
{{- fail (printf "%s.responder.name %q: the domain names *.k8s.io and *.kubernetes.io are reserved for Kubernetes' own responders" $.key $.responder.name) }}
{{- end }}
{{- end }}
{{- if not (and (ge (int64 .priority) 1000) (le (int64 .priority) 100000)) }}
{{- fail (printf "%s.responder.priority %v: a responder's priority is 1000 to 100000 (higher runs first; 0-999 are reserved for *.k8s.io responders; 10000 is a pod's managing controller's)" $.key .priority) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The CEL condition that a pod's controller is of one of kinds (Deployment:
a ReplicaSet whose pods carry the Deployment controller's pod-template-hash
label; None: no controller); "" for every pod. Call with a list of kinds.
*/}}
{{- define "evictionrequest.participantOwnerCondition" -}}
{{- $controller := "(has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []).exists(r, has(r.controller) && r.controller && r.apiVersion.startsWith('%s/') && r.kind == '%s')" }}
{{- $terms := list }}
{{- range $kind := . }}
{{- if eq $kind "Deployment" }}
{{- $terms = append $terms (printf "(%s && has(object.metadata.labels) && 'pod-template-hash' in object.metadata.labels)" (printf $controller "apps" "ReplicaSet")) }}
{{- else if eq $kind "None" }}
{{- $terms = append $terms "!(has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []).exists(r, has(r.controller) && r.controller)" }}
{{- else }}
{{- $terms = append $terms (printf $controller (ternary "batch" "apps" (eq $kind "Job")) $kind) }}
{{- end }}
{{- end }}
{{- join " ||\n" $terms }}
{{- end }}

{{/*
The CEL condition that a pod declares no participant of its own, on the
APIs the rule adds to (those the release serves: the evictions of the
others never meet what a pod declares there): no interceptor in its
evictionrequest.coordination.k8s.io/interceptors annotation (a name
non-empty after trim), no entry in spec.evictionResponders. What another
rule added, as its participants.evictionrequest.coordination.k8s.io/RULE
mark lists, is not the pod's own, so that the rules do not depend on the
order kube-apiserver runs them in. Call with a rule of
evictionrequest.participantRules.
*/}}
{{- define "evictionrequest.participantSkipCondition" -}}
{{- $annotation := "evictionrequest.coordination.k8s.io/interceptors" }}
{{- $addedByARule := "(has(object.metadata.annotations) && object.metadata.annotations.exists(k, k.startsWith('participants.evictionrequest.coordination.k8s.io/') && object.metadata.annotations[k].split(',').exists(m, m.trim() == %s)))" }}
{{- $terms := list }}
{{- if .interceptor }}
{{- $terms = append $terms (printf "!(has(object.metadata.annotations) && '%s' in object.metadata.annotations &&\n  object.metadata.annotations['%s'].split(',').exists(n, n.trim() != '' &&\n    !%s))" $annotation $annotation (printf $addedByARule "n.trim()")) }}
{{- end }}
{{- if .responder }}
{{- $terms = append $terms (printf "!(has(object.spec.evictionResponders) &&\n  object.spec.evictionResponders.exists(r,\n    !%s))" (printf $addedByARule "r.name")) }}
{{- end }}
{{- join " &&\n" $terms }}
{{- end }}
