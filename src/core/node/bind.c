/*
 * bind.c - the aligned-set planner behind `gpufleet bind`.
 *
 * CPUs: the union of the GPUs' local CPUs.  With a CPU count, each
 * distinct locality gets a share proportional to the GPUs it holds
 * (remainder to the first ones), filled core by core with each core's
 * hardware threads together, lowest CPU first.  Memory: the union of the
 * GPUs' local NUMA nodes.  NICs: for each GPU the nearest NIC(s), in
 * first-seen order without repeats.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/bind.h>
#include <gpufleet/gpu_topo.h>
#include <gpufleet/link.h>

#include "util/fmt.h"

__attribute__((format(printf, 2, 3))) static void reason(struct gf_bind_plan *p,
							 const char *fmt, ...)
{
	if (p->nreasons >= GF_BIND_MAX_REASONS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->reasons[p->nreasons++], sizeof(p->reasons[0]), fmt, ap);
	va_end(ap);
}

static void setenv_(struct gf_bind_plan *p, const char *name, const char *value)
{
	if (p->nenv >= GF_BIND_MAX_ENV)
		return;
	gf_note(p->env_name[p->nenv], sizeof(p->env_name[0]), "%s", name);
	gf_note(p->env_value[p->nenv], sizeof(p->env_value[0]), "%s", value);
	p->nenv++;
}

int gf_bind_choose_gpus(const struct gf_node *n, int count,
			const struct gf_bitmap *busy, struct gf_bind_request *r,
			struct gf_err *e)
{
	struct gf_gpu_topo t;
	int rc = gf_gpu_topo_from_node(n, &t, e);
	if (rc)
		return rc;
	uint32_t free_mask = 0;
	int nfree = 0;
	for (int g = 0; g < n->ngpus; g++)
		if (!busy || !gf_bitmap_isset(busy, g)) {
			free_mask |= UINT32_C(1) << g;
			nfree++;
		}
	if (count <= 0 || count > nfree)
		return gf_err_set(e, GF_EINVAL,
				  "%d GPUs asked for, %d of the node's %d are "
				  "free",
				  count, nfree, n->ngpus);
	int out[GF_GPU_TOPO_MAX];
	if ((rc = gf_gpu_topo_choose(&t, free_mask, count, false, out)))
		return gf_err_set(e, rc, "%d GPUs asked for: none chosen",
				  count);
	r->ngpus = count;
	for (int i = 0; i < count; i++)
		r->gpus[i] = out[i];
	struct gf_gpu_set_score sc;
	gf_gpu_topo_score(&t, out, count, &sc);
	char weakest[16];
	if (sc.min_pair >= GF_GQ_NVLINK)
		gf_note(weakest, sizeof(weakest), "NV%d",
			sc.min_pair - GF_GQ_NVLINK);
	else
		gf_note(weakest, sizeof(weakest), "%s",
			gf_link_class_name((enum gf_link_class)(
				GF_LINK_SYS + GF_GQ_SYS - sc.min_pair)));
	if (count == 1)
		gf_note(r->chose, sizeof(r->chose),
			"GPU%d: the first of %d free", out[0], nfree);
	else
		gf_note(r->chose, sizeof(r->chose),
			"%d of %d free GPUs chosen by their links: weakest "
			"pair %s, link score %d",
			count, nfree, weakest, sc.sum_pair);
	return 0;
}

int gf_bind_parse_gpus(const char *s, struct gf_bind_request *r)
{
	struct gf_bitmap b;
	r->ngpus = 0;
	/* Keep the user's order: parse item by item. */
	const char *p = s;
	while (*p) {
		char item[32];
		size_t len = strcspn(p, ",");
		if (len == 0 || len >= sizeof(item))
			return GF_EPARSE;
		memcpy(item, p, len);
		item[len] = '\0';
		int rc = gf_bitmap_parse_list(&b, item);
		if (rc)
			return rc;
		int i;
		gf_bitmap_for_each(i, &b)
		{
			if (r->ngpus >= GF_MAX_GPUS)
				return GF_ETOOBIG;
			r->gpus[r->ngpus++] = i;
		}
		p += len;
		if (*p == ',') {
			p++;
			if (*p == '\0')
				return GF_EPARSE;
		}
	}
	return r->ngpus ? 0 : GF_EPARSE;
}

/* The core of a PU, or a number no core has when it is unknown. */
static int core_of(const struct gf_node *n, int pu)
{
	return n->pu_core[pu] >= 0 ? n->pu_core[pu] : GF_BITMAP_BITS + pu;
}

int gf_bind_cores(const struct gf_node *n, const struct gf_bitmap *cpus,
		  int *first)
{
	struct gf_bitmap seen; /* cores met (known ones) */
	int ncores = 0, pu;
	gf_bitmap_zero(&seen);
	gf_bitmap_for_each(pu, cpus)
	{
		int c = n->pu_core[pu];
		if (c >= 0 && gf_bitmap_isset(&seen, c))
			continue;
		if (c >= 0)
			gf_bitmap_set(&seen, c);
		if (first)
			first[ncores] = pu;
		ncores++;
	}
	return ncores;
}

void gf_bind_split(const struct gf_node *n, const struct gf_bitmap *cpus,
		   int ntasks, int task, struct gf_bitmap *out)
{
	int first[GF_BITMAP_BITS]; /* each core's first PU, in order */
	int ncores = gf_bind_cores(n, cpus, first), pu;
	gf_bitmap_zero(out);
	if (ncores == 0 || ntasks <= 0 || task < 0 || task >= ntasks)
		return;
	int lo = (int)((long)task * ncores / ntasks);
	int hi = (int)((long)(task + 1) * ncores / ntasks);
	if (hi <= lo)
		hi = lo + 1; /* fewer cores than tasks: share one */
	for (int k = lo; k < hi; k++)
		gf_bitmap_for_each(pu, cpus)
		{
			if (core_of(n, pu) == core_of(n, first[k]))
				gf_bitmap_set(out, pu);
		}
}

/* Take up to `want` CPUs of `from`, whole cores first. */
static int take_cpus(const struct gf_node *n, const struct gf_bitmap *from,
		     struct gf_bitmap *taken, int want)
{
	int got = 0, pu;
	gf_bitmap_for_each(pu, from)
	{
		if (got >= want)
			break;
		if (gf_bitmap_isset(taken, pu))
			continue;
		int core = n->pu_core[pu];
		int sib;
		gf_bitmap_for_each(sib, from)
		{
			if (got >= want)
				break;
			if (n->pu_core[sib] == core &&
			    !gf_bitmap_isset(taken, sib)) {
				gf_bitmap_set(taken, sib);
				got++;
			}
		}
	}
	return got;
}

static int plan_cpus(const struct gf_node *n, const struct gf_bind_request *r,
		     struct gf_bind_plan *p, struct gf_err *e)
{
	/* Distinct localities and how many of the GPUs each holds. */
	int owner[GF_MAX_GPUS], weight[GF_MAX_GPUS], nloc = 0;
	for (int i = 0; i < p->ngpus; i++) {
		const struct gf_gpu *g = &n->gpus[p->gpus[i]];
		int k;
		for (k = 0; k < nloc; k++)
			if (gf_bitmap_equal(&n->gpus[owner[k]].cpus, &g->cpus))
				break;
		if (k == nloc) {
			owner[nloc] = p->gpus[i];
			weight[nloc++] = 0;
		}
		weight[k]++;
	}
	int total = gf_bitmap_count(&p->cpus);
	if (r->cpus > total)
		return gf_err_set(e, GF_EINVAL,
				  "cannot give %d CPUs: the GPUs' local CPUs "
				  "are %d",
				  r->cpus, total);
	struct gf_bitmap taken;
	gf_bitmap_zero(&taken);
	int left = r->cpus;
	for (int k = 0; k < nloc; k++) {
		int share = r->cpus * weight[k] / p->ngpus;
		if (k == nloc - 1)
			share = left;
		int got = take_cpus(n, &n->gpus[owner[k]].cpus, &taken, share);
		left -= got;
	}
	/* A locality too small for its share: top up from the others. */
	for (int k = 0; left > 0 && k < nloc; k++)
		left -= take_cpus(n, &n->gpus[owner[k]].cpus, &taken, left);
	p->cpus = taken;
	if (nloc > 1)
		reason(p,
		       "%d CPUs shared across %d GPU localities in "
		       "proportion to their GPUs, whole cores first",
		       r->cpus, nloc);
	else
		reason(p, "%d of the %d local CPUs, whole cores first", r->cpus,
		       total);
	return 0;
}

static void plan_env(const struct gf_node *n, struct gf_bind_plan *p)
{
	char v[1024];
	size_t len = 0;
	bool uuids = true, amd = false;
	for (int i = 0; i < p->ngpus; i++) {
		const struct gf_gpu *g = &n->gpus[p->gpus[i]];
		if (g->uuid[0] == '\0')
			uuids = false;
		if (g->vendor == GF_VENDOR_AMD)
			amd = true;
	}
	v[0] = '\0';
	for (int i = 0; i < p->ngpus && len + 100 < sizeof(v); i++) {
		const struct gf_gpu *g = &n->gpus[p->gpus[i]];
		if (uuids && !amd)
			len += (size_t)snprintf(v + len, sizeof(v) - len,
						"%s%s", i ? "," : "", g->uuid);
		else
			len += (size_t)snprintf(v + len, sizeof(v) - len,
						"%s%d", i ? "," : "",
						p->gpus[i]);
	}
	if (amd) {
		setenv_(p, "ROCR_VISIBLE_DEVICES", v);
	} else {
		setenv_(p, "CUDA_VISIBLE_DEVICES", v);
		if (!uuids) /* indexes must mean NVML's (PCI bus) order */
			setenv_(p, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
	}
	if (p->nnics == 0)
		return;
	char hca[1024] = "=", ucx[1024] = "", sock[1024] = "";
	size_t lh = 1, lu = 0, ls = 0;
	bool rdma = false;
	for (int i = 0; i < p->nnics; i++) {
		const struct gf_nic *c = &n->nics[p->nics[i]];
		/* a NIC known only by its PCI address (an NCCL topology file
		 * that names none) has no device name NCCL or UCX take */
		if (strchr(c->name, ':')) {
			reason(p,
			       "NIC at %s: the source gives no device name; "
			       "NCCL and UCX choose it themselves",
			       c->name);
			continue;
		}
		if (c->rdma) {
			lh += (size_t)snprintf(hca + lh, sizeof(hca) - lh,
					       "%s%s", rdma ? "," : "",
					       c->name);
			lu += (size_t)snprintf(ucx + lu, sizeof(ucx) - lu,
					       "%s%s:1", lu ? "," : "",
					       c->name);
			rdma = true;
		} else {
			ls += (size_t)snprintf(sock + ls, sizeof(sock) - ls,
					       "%s%s", ls ? "," : "", c->name);
			lu += (size_t)snprintf(ucx + lu, sizeof(ucx) - lu,
					       "%s%s", lu ? "," : "", c->name);
		}
		if (lh >= sizeof(hca) - 40 || lu >= sizeof(ucx) - 40 ||
		    ls >= sizeof(sock) - 40)
			break;
	}
	if (rdma)
		setenv_(p, "NCCL_IB_HCA", hca);
	if (ls)
		setenv_(p, "NCCL_SOCKET_IFNAME", sock);
	if (lu)
		setenv_(p, "UCX_NET_DEVICES", ucx);
}

static void plan_nics(const struct gf_node *n, struct gf_bind_plan *p)
{
	for (int i = 0; i < p->ngpus; i++) {
		int g = p->gpus[i], idx[GF_MAX_NICS];
		int k = gf_link_gpu_nearest_nics(n, g, idx, GF_MAX_NICS);
		for (int x = 0; x < k; x++) {
			bool seen = false;
			for (int y = 0; y < p->nnics; y++)
				seen |= p->nics[y] == idx[x];
			if (!seen && p->nnics < GF_MAX_NICS)
				p->nics[p->nnics++] = idx[x];
		}
		if (k)
			reason(p, "GPU%d: nearest NIC %s%s (%s)", g,
			       n->nics[idx[0]].name, k > 1 ? " and peers" : "",
			       gf_link_class_name(gf_link_gpu_best_nic(n, g)));
	}
}

int gf_bind_plan(const struct gf_node *n, const struct gf_bind_request *r,
		 struct gf_bind_plan *p, struct gf_err *e)
{
	memset(p, 0, sizeof(*p));
	if (r->ngpus <= 0)
		return gf_err_set(e, GF_EINVAL, "no GPU given");
	if (r->cpus < 0)
		return gf_err_set(e, GF_EINVAL, "CPU count %d is negative",
				  r->cpus);
	p->locality_known = true;
	if (r->chose[0])
		reason(p, "%s", r->chose);
	for (int i = 0; i < r->ngpus; i++) {
		int g = r->gpus[i];
		if (g < 0 || g >= n->ngpus)
			return gf_err_set(e, GF_ERANGE,
					  "no GPU %d: this node has GPU0..%d",
					  g, n->ngpus - 1);
		for (int j = 0; j < i; j++)
			if (r->gpus[j] == g)
				return gf_err_set(e, GF_EINVAL,
						  "GPU %d given twice", g);
		p->gpus[p->ngpus++] = g;
		const struct gf_gpu *gpu = &n->gpus[g];
		if (!gpu->locality_known) {
			p->locality_known = false;
			continue;
		}
		if (p->ngpus > 1 && !gf_bitmap_is_empty(&p->mems) &&
		    !gf_bitmap_equal(&p->mems, &gpu->mems))
			p->spans_numa = true;
		gf_bitmap_or(&p->cpus, &gpu->cpus);
		gf_bitmap_or(&p->mems, &gpu->mems);
	}
	char cl[2048], ml[256];
	if (!p->locality_known) {
		if (r->cpus > 0)
			return gf_err_set(e, GF_EINVAL,
					  "cannot pick CPUs: a GPU's locality "
					  "is unknown");
		p->cpus = n->cpus;
		gf_bitmap_zero(&p->mems);
		for (int i = 0; i < n->nnuma; i++)
			gf_bitmap_set(&p->mems, n->numa[i].os_index);
		reason(p, "a GPU's locality is unknown: CPUs and memory "
			  "left unrestricted");
	} else {
		gf_bitmap_format_list(&p->cpus, cl, sizeof(cl));
		gf_bitmap_format_list(&p->mems, ml, sizeof(ml));
		if (p->spans_numa)
			reason(p,
			       "the GPUs span NUMA nodes %s: binding to "
			       "the union of their local CPUs (%s); a job "
			       "per socket would keep memory local",
			       ml, cl);
		else
			reason(p,
			       "the GPUs are local to NUMA node %s "
			       "(CPUs %s)",
			       ml, cl);
		if (r->cpus > 0) {
			int rc = plan_cpus(n, r, p, e);
			if (rc)
				return rc;
		}
	}
	plan_nics(n, p);
	if (p->nnics == 0)
		reason(p, "no NIC on this node: network variables not set");
	plan_env(n, p);
	return 0;
}
