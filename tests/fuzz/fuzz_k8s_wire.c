/*
 * fuzz_k8s_wire.c - the scheduler extender's wire types (src/k8s/wire.c,
 * pod.c): ExtenderArgs through gf_k8s_args_parse (its in-place read of
 * plain NodeNames, and jansson), then the same document as
 * ExtenderBindingArgs,
 * ExtenderPreemptionArgs and as a Pod.
 */
#include "fuzz.h"
#include "k8s/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_jv *v = NULL;
	struct gf_err e = { 0 };
	struct gf_k8s_args a;
	memset(&a, 0, sizeof(a));
	/* every reader's result is only folded: gcc warns on (void)f() for
	 * must-check functions */
	int rc = gf_k8s_args_parse((const char *)data, size, &v, &a, &e);
	gf_k8s_args_release(&a);
	gf_jv_free(v);
	v = NULL;
	if (gf_jv_parse((const char *)data, size, &v, &e) != 0)
		return 0;
	struct gf_k8s_bind_args b;
	rc |= gf_k8s_bind_args_read(v, &b, &e);
	struct gf_k8s_preempt_args p;
	memset(&p, 0, sizeof(p));
	rc |= gf_k8s_preempt_args_read(v, &p, &e);
	gf_k8s_preempt_args_release(&p);
	static struct gf_k8s_pod pod;
	rc |= gf_k8s_pod_read(v, &pod, &e);
	const struct gf_jv *inner = gf_jv_get(v, "Pod");
	if (inner)
		rc |= gf_k8s_pod_read(inner, &pod, &e);
	gf_jv_free(v);
	(void)rc;
	return 0;
}
