/*
 * pod.c - a Pod object read as the extender needs it: name, namespace,
 * uid, node, phase, its GPU asks summed as kube-scheduler sums a pod's
 * requests, its CPU and memory, and the GPU models it accepts.
 *
 * kube-scheduler's arithmetic (k8s.io/component-helpers/resource,
 * PodRequests): a container's request for a resource is its request, or
 * its limit when it gives none (the API server's defaulting, so a pod
 * that names an extended resource only in limits asks for that much);
 * the pod asks the sum over its containers, plus every restartable init
 * container (a sidecar: it runs beside them), and at least, for each
 * init container in order, its own ask plus the sidecars started before
 * it; plus spec.overhead.  Extended resources are whole numbers (the API
 * server refuses "0.5" for nvidia.com/gpu); so are ours.
 *
 * Invariants: a pod read has every string NUL-terminated inside its
 * array; the counts are >= 0; a read that fails says which field.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <gpufleet/scale.h>

#include "k8s/k8s.h"
#include "util/fmt.h"

#define NMIG 8 /* distinct nvidia.com/mig-* names one pod may name */

enum { R_CPU, R_MEM, R_GPU, R_MILLI, R_MIG0, NRES = R_MIG0 + NMIG };

struct res {
	int64_t v[NRES]; /* milli-units */
};

struct rd {
	struct gf_k8s_pod *p;
	char mig[NMIG][GF_MIG_PROFILE_MAX];
	int nmig;
	struct gf_err *e;
};

static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void res_add(struct res *a, const struct res *b)
{
	for (int i = 0; i < NRES; i++)
		a->v[i] = sat_add(a->v[i], b->v[i]);
}

static void res_max(struct res *a, const struct res *b)
{
	for (int i = 0; i < NRES; i++)
		if (b->v[i] > a->v[i])
			a->v[i] = b->v[i];
}

static int bad(struct rd *r, const char *where, const char *what)
{
	return gf_err_set(r->e, GF_EINVAL, "pod %s/%s: %s%s",
			  r->p->ns[0] ? r->p->ns : "?",
			  r->p->name[0] ? r->p->name : "?", where, what);
}

/* The slot of a resource name, -1 when not one we read; a new MIG
 * name takes a slot (GF_ETOOBIG past NMIG). */
static int slot_of(struct rd *r, const char *name)
{
	if (!strcmp(name, "cpu"))
		return R_CPU;
	if (!strcmp(name, "memory"))
		return R_MEM;
	if (!strcmp(name, GF_K8S_RES_GPU))
		return R_GPU;
	if (!strcmp(name, GF_K8S_RES_MILLI))
		return R_MILLI;
	size_t pl = strlen(GF_K8S_RES_MIG);
	if (strncmp(name, GF_K8S_RES_MIG, pl) != 0)
		return -1;
	const char *prof = name + pl;
	for (int k = 0; k < r->nmig; k++)
		if (!strcmp(r->mig[k], prof))
			return R_MIG0 + k;
	if (r->nmig == NMIG || !*prof ||
	    gf_fmt(r->mig[r->nmig], GF_MIG_PROFILE_MAX, "%s", prof))
		return GF_ETOOBIG;
	return R_MIG0 + r->nmig++;
}

/* One resource list ("requests" or "limits") into v, marking what it
 * names in has; `only_absent`: skip names already marked (limits after
 * requests). */
static int list_read(struct rd *r, const char *cname, const char *which,
		     const struct gf_jv *list, struct res *v, bool *has,
		     bool only_absent)
{
	char where[GF_K8S_NAME_MAX + 96];
	if (list == NULL || gf_jv_type(list) == GF_JV_NULL)
		return 0;
	if (gf_jv_type(list) != GF_JV_OBJ) {
		gf_note(where, sizeof(where), "container %.*s: %s: ", 128,
			cname, which);
		return bad(r, where, "expected an object");
	}
	void *it = NULL;
	const struct gf_jv *q;
	const char *k;
	while ((k = gf_jv_next(list, &it, &q)) != NULL) {
		int s = slot_of(r, k);
		gf_note(where, sizeof(where), "container %.*s: '%.*s': ", 128,
			cname, 80, k);
		if (s == GF_ETOOBIG)
			return bad(r, where, "too many MIG resources");
		if (s < 0 || (only_absent && has[s]))
			continue;
		if (s >= R_GPU)
			r->p->managed = true;
		const char *txt = gf_jv_str(q);
		int64_t milli;
		if (txt == NULL || gf_quantity_milli(txt, &milli) != 0)
			return bad(r, where, "expected a quantity string");
		if (s >= R_GPU && milli % 1000 != 0) {
			char what[96];
			gf_note(what, sizeof(what),
				"expected a whole number, got \"%.40s\"", txt);
			return bad(r, where, what);
		}
		v->v[s] = milli;
		has[s] = true;
	}
	return 0;
}

/* A container's asks: requests, then limits where no request. */
static int container_read(struct rd *r, const struct gf_jv *c, struct res *v,
			  bool *sidecar)
{
	memset(v, 0, sizeof(*v));
	bool has[NRES] = { false };
	const char *cname = gf_jv_str(gf_jv_get(c, "name"));
	if (gf_jv_type(c) != GF_JV_OBJ)
		return bad(r, "a container: ", "expected an object");
	cname = cname ? cname : "?";
	const char *rp = gf_jv_str(gf_jv_get(c, "restartPolicy"));
	*sidecar = rp && !strcmp(rp, "Always");
	const struct gf_jv *res = gf_jv_get(c, "resources");
	int rc = list_read(r, cname, "requests", gf_jv_get(res, "requests"), v,
			   has, false);
	if (rc == 0)
		rc = list_read(r, cname, "limits", gf_jv_get(res, "limits"), v,
			       has, true);
	return rc;
}

static int containers(struct rd *r, const struct gf_jv *spec, struct res *sum)
{
	struct res one;
	bool side;
	const struct gf_jv *cs = gf_jv_get(spec, "containers");
	for (size_t i = 0; i < gf_jv_len(cs); i++) {
		int rc = container_read(r, gf_jv_at(cs, i), &one, &side);
		if (rc)
			return rc;
		res_add(sum, &one);
	}
	/* init containers: sidecars join the sum; each one's peak */
	struct res sidecars = { 0 }, init_max = { 0 };
	const struct gf_jv *ic = gf_jv_get(spec, "initContainers");
	for (size_t i = 0; i < gf_jv_len(ic); i++) {
		int rc = container_read(r, gf_jv_at(ic, i), &one, &side);
		if (rc)
			return rc;
		if (side) {
			res_add(sum, &one);
			res_add(&sidecars, &one);
			one = sidecars;
		} else {
			res_add(&one, &sidecars);
		}
		res_max(&init_max, &one);
	}
	res_max(sum, &init_max);
	bool has[NRES] = { false };
	struct res over = { 0 };
	int rc = list_read(r, "(overhead)", "overhead",
			   gf_jv_get(spec, "overhead"), &over, has, false);
	if (rc == 0)
		res_add(sum, &over);
	return rc;
}

static int str_copy(struct rd *r, const struct gf_jv *v, const char *field,
		    char *out, size_t size, bool required)
{
	const char *s = gf_jv_str(v);
	out[0] = '\0';
	if (s == NULL && !required &&
	    (v == NULL || gf_jv_type(v) == GF_JV_NULL))
		return 0;
	if (s == NULL || (required && !*s) || gf_fmt(out, size, "%s", s)) {
		char what[80];
		out[0] = '\0';
		gf_note(what, sizeof(what),
			"expected a string of 1 to %zu bytes", size - 1);
		return bad(r, field, what);
	}
	return 0;
}

static int model_add(struct rd *r, const char *v)
{
	struct gf_k8s_pod *p = r->p;
	for (int k = 0; k < p->nmodels; k++)
		if (!strcmp(p->models[k], v))
			return 0;
	if (p->nmodels == GF_K8S_MODELS || !*v ||
	    gf_fmt(p->models[p->nmodels], GF_K8S_VALUE_MAX, "%s", v)) {
		if (p->nmodels < GF_K8S_MODELS)
			p->models[p->nmodels][0] = '\0';
		return bad(r, "GPU models: ", "at most 8 of at most 63 bytes");
	}
	p->nmodels++;
	return 0;
}

/* Our annotation's comma list. */
static int models_of_annotation(struct rd *r, const char *list)
{
	char one[GF_K8S_VALUE_MAX + 1];
	while (*list) {
		size_t n = strcspn(list, ",");
		while (n && isspace((unsigned char)list[n - 1]))
			n--;
		if (n >= sizeof(one))
			return bad(r, GF_K8S_ANN_MODEL ": ", "a name too long");
		memcpy(one, list, n);
		one[n] = '\0';
		if (n) {
			int rc = model_add(r, one);
			if (rc)
				return rc;
		}
		list += strcspn(list, ",");
		while (*list == ',' || isspace((unsigned char)*list))
			list++;
	}
	return 0;
}

/* The values of key nvidia.com/gpu.product, operator In, in one node
 * selector term; false when the term does not constrain it. */
static bool term_models(const struct gf_jv *term, const struct gf_jv **vals)
{
	const struct gf_jv *ex = gf_jv_get(term, "matchExpressions");
	for (size_t i = 0; i < gf_jv_len(ex); i++) {
		const struct gf_jv *x = gf_jv_at(ex, i);
		const char *k = gf_jv_str(gf_jv_get(x, "key"));
		const char *op = gf_jv_str(gf_jv_get(x, "operator"));
		if (k && op && !strcmp(k, GF_K8S_LABEL_PRODUCT) &&
		    !strcmp(op, "In")) {
			*vals = gf_jv_get(x, "values");
			return true;
		}
	}
	return false;
}

/* Required node affinity: a constraint only if every term has one. */
static int models_of_affinity(struct rd *r, const struct gf_jv *spec)
{
	const struct gf_jv *terms = gf_jv_get(
		gf_jv_get(
			gf_jv_get(gf_jv_get(spec, "affinity"), "nodeAffinity"),
			"requiredDuringSchedulingIgnoredDuringExecution"),
		"nodeSelectorTerms");
	size_t n = gf_jv_len(terms);
	const struct gf_jv *vals;
	for (size_t i = 0; i < n; i++)
		if (!term_models(gf_jv_at(terms, i), &vals))
			return 0;
	for (size_t i = 0; i < n; i++) {
		term_models(gf_jv_at(terms, i), &vals);
		for (size_t k = 0; k < gf_jv_len(vals); k++) {
			const char *s = gf_jv_str(gf_jv_at(vals, k));
			int rc = s ? model_add(r, s) : 0;
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int models(struct rd *r, const struct gf_jv *meta,
		  const struct gf_jv *spec)
{
	const struct gf_jv *ann = gf_jv_get(meta, "annotations");
	const char *a = gf_jv_str(gf_jv_get(ann, GF_K8S_ANN_MODEL));
	const char *topo = gf_jv_str(gf_jv_get(ann, GF_K8S_ANN_TOPOLOGY));
	r->p->any_topology = topo && !strcmp(topo, "any");
	if (a)
		return models_of_annotation(r, a);
	const char *sel = gf_jv_str(gf_jv_get(gf_jv_get(spec, "nodeSelector"),
					      GF_K8S_LABEL_PRODUCT));
	if (sel)
		return model_add(r, sel);
	return models_of_affinity(r, spec);
}

static int identity(struct rd *r, const struct gf_jv *meta,
		    const struct gf_jv *spec, const struct gf_jv *status)
{
	struct gf_k8s_pod *p = r->p;
	int rc = str_copy(r, gf_jv_get(meta, "name"),
			  "metadata.name: ", p->name, sizeof(p->name), true);
	if (rc == 0)
		rc = str_copy(r, gf_jv_get(meta, "namespace"),
			      "metadata.namespace: ", p->ns, sizeof(p->ns),
			      false);
	if (rc == 0 && !p->ns[0])
		rc = gf_fmt(p->ns, sizeof(p->ns), "default");
	if (rc == 0)
		rc = str_copy(r, gf_jv_get(meta, "uid"),
			      "metadata.uid: ", p->uid, sizeof(p->uid), false);
	if (rc == 0)
		rc = str_copy(r, gf_jv_get(spec, "nodeName"),
			      "spec.nodeName: ", p->node_name,
			      sizeof(p->node_name), false);
	if (rc == 0)
		rc = str_copy(r, gf_jv_get(status, "phase"),
			      "status.phase: ", p->phase, sizeof(p->phase),
			      false);
	return rc;
}

int gf_k8s_pod_read(const struct gf_jv *pod, struct gf_k8s_pod *p,
		    struct gf_err *e)
{
	memset(p, 0, sizeof(*p));
	struct rd r = { .p = p, .e = e };
	if (gf_jv_type(pod) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "'Pod': expected an object");
	const struct gf_jv *meta = gf_jv_get(pod, "metadata");
	const struct gf_jv *spec = gf_jv_get(pod, "spec");
	if (gf_jv_type(meta) != GF_JV_OBJ || gf_jv_type(spec) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL,
				  "'Pod': expected an object with metadata "
				  "and spec");
	int rc = identity(&r, meta, spec, gf_jv_get(pod, "status"));
	struct res sum = { 0 };
	if (rc == 0)
		rc = containers(&r, spec, &sum);
	if (rc == 0)
		rc = models(&r, meta, spec);
	if (rc)
		return rc;
	p->cpu_milli = sum.v[R_CPU];
	/* milli-bytes to MiB, rounded up */
	p->memory_mib = sum.v[R_MEM] / 1000 / 1048576 +
			(sum.v[R_MEM] % (1000LL * 1048576) != 0);
	p->gpus = sum.v[R_GPU] / 1000;
	p->gpu_milli = sum.v[R_MILLI] / 1000;
	for (int k = 0; k < r.nmig; k++) {
		if (sum.v[R_MIG0 + k] == 0)
			continue;
		if (p->nmig++ == 0) {
			_Static_assert(sizeof(p->mig_profile) ==
					       sizeof(r.mig[k]),
				       "a profile copied whole");
			memcpy(p->mig_profile, r.mig[k],
			       sizeof(p->mig_profile));
			p->mig_count = sum.v[R_MIG0 + k] / 1000;
		}
	}
	return 0;
}

void gf_k8s_product_norm(const char *in, char *out, size_t size)
{
	size_t n = 0;
	for (; *in && n + 1 < size; in++)
		out[n++] = *in == ' ' || *in == '_'
				   ? '-'
				   : (char)tolower((unsigned char)*in);
	out[n] = '\0';
	char *x = strstr(out, "-mig-");
	if (x)
		*x = '\0';
	n = strlen(out);
	if (n >= 7 && !strcmp(out + n - 7, "-shared"))
		out[n - 7] = '\0';
}
