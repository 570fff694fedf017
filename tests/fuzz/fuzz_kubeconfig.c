/*
 * fuzz_kubeconfig.c - a kubeconfig (src/k8s/kubeconfig.c: YAML, the
 * current context and a named one) through gf_k8s_api_kubeconfig.
 * Relative paths in it are taken from /tmp (the scratch file's
 * directory); what they name is read when it exists.
 */
#include "fuzz.h"
#include "k8s/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".yaml");
	struct gf_k8s_api_cfg c;
	struct gf_err e = { 0 };
	memset(&c, 0, sizeof(c));
	fz_answer("kubeconfig", gf_k8s_api_kubeconfig(path, NULL, &c, &e), &e);
	gf_k8s_api_cfg_release(&c);
	memset(&c, 0, sizeof(c));
	fz_answer("kubeconfig-ctx",
		  gf_k8s_api_kubeconfig(path, "kind-gf", &c, &e), &e);
	gf_k8s_api_cfg_release(&c);
	return 0;
}
