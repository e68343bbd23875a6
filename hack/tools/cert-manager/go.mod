// The cert-manager release whose CustomResourceDefinitions the e2e suite
// installs to dry-run the cert-manager overlay of artifacts/.
module github.com/evictionrequest/apiserver/hack/tools/cert-manager

go 1.26.0

require github.com/cert-manager/cert-manager v1.21.2
