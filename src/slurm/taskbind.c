/*
 * taskbind.c - one task's binding inside a Slurm step (taskbind.h).
 *
 * Invariants: a task's CPUs are always within the step's allocation when
 * it is known (never a CPU Slurm gave another job); the tasks sharing a
 * GPU set get disjoint whole-core shares whose union is the GPUs' local
 * CPUs within the step (gf_bind_split); the plan itself is gf_bind_plan's.
 */
#include "slurm/taskbind.h"

#include <stdio.h>
#include <string.h>

#include "slurm/gres.h"

int gf_tb_parse(const char *s, struct gf_tb_opts *o, char *why, size_t size)
{
	struct gf_tb_opts r = { .mode = GF_TB_CLOSEST };
	bool mode = false;
	if (!s || !*s) {
		snprintf(why, size, "empty value");
		return -1;
	}
	for (const char *p = s; *p;) {
		size_t len = strcspn(p, ",");
		if (len == 7 && strncmp(p, "verbose", 7) == 0)
			r.verbose = true;
		else if (len == 6 && strncmp(p, "strict", 6) == 0)
			r.strict = true;
		else if (!mode && len == 7 && strncmp(p, "closest", 7) == 0)
			mode = true, r.mode = GF_TB_CLOSEST;
		else if (!mode && len == 3 && strncmp(p, "nic", 3) == 0)
			mode = true, r.mode = GF_TB_NIC;
		else if (!mode && len == 4 && strncmp(p, "none", 4) == 0)
			mode = true, r.mode = GF_TB_NONE;
		else {
			snprintf(why, size,
				 "'%.*s' in '%s' is not closest, nic, none, "
				 "verbose or strict (one mode)",
				 (int)len, p, s);
			return -1;
		}
		p += len;
		if (*p)
			p++;
	}
	*o = r;
	return 0;
}

/* "0,1,4-5" into a list; count, or -1. */
static int id_list(const char *s, int *out, int max)
{
	struct gf_bind_request r;
	if (gf_bind_parse_gpus(s, &r) != 0 || r.ngpus > max)
		return -1;
	memcpy(out, r.gpus, (size_t)r.ngpus * sizeof(int));
	return r.ngpus;
}

static int by_uuid(const struct gf_node *n, const char *cvd,
		   struct gf_bind_request *r, char *why, size_t size)
{
	r->ngpus = 0;
	for (const char *p = cvd; *p;) {
		size_t len = strcspn(p, ",");
		int g;
		for (g = 0; g < n->ngpus; g++)
			if (n->gpus[g].uuid[0] &&
			    strlen(n->gpus[g].uuid) == len &&
			    strncmp(n->gpus[g].uuid, p, len) == 0)
				break;
		if (g == n->ngpus || r->ngpus == GF_MAX_GPUS) {
			snprintf(why, size,
				 "GPU '%.*s' is not one of this node's (UUIDs "
				 "need NVML: nvml=1 in plugstack.conf)",
				 (int)len, p);
			return -1;
		}
		r->gpus[r->ngpus++] = g;
		p += len;
		if (*p)
			p++;
	}
	return 0;
}

int gf_tb_task_gpus(const struct gf_node *n, const char *step, const char *cvd,
		    struct gf_bind_request *r, bool *whole, char *why,
		    size_t size)
{
	int s[GF_MAX_GPUS], ns = 0;
	memset(r, 0, sizeof(*r));
	*whole = true;
	if (cvd && (!*cvd || strcmp(cvd, "NoDevFiles") == 0))
		cvd = NULL;
	if (step && *step && (ns = id_list(step, s, GF_MAX_GPUS)) < 0) {
		snprintf(why, size, "cannot read the step's GPUs '%.60s'",
			 step);
		return -1;
	}
	if (cvd && strncmp(cvd, "GPU-", 4) == 0 &&
	    by_uuid(n, cvd, r, why, size))
		return -1;
	if (cvd && r->ngpus == 0) {
		int v[GF_MAX_GPUS];
		int nv = id_list(cvd, v, GF_MAX_GPUS);
		if (nv < 0) {
			snprintf(why, size,
				 "cannot read CUDA_VISIBLE_DEVICES '%.60s'",
				 cvd);
			return -1;
		}
		bool subset = true;
		for (int i = 0; i < nv; i++) {
			bool in = ns == 0;
			for (int k = 0; k < ns && !in; k++)
				in = s[k] == v[i];
			subset &= in;
		}
		for (int i = 0; i < nv; i++)
			r->gpus[r->ngpus++] = subset	  ? v[i]
					      : v[i] < ns ? s[v[i]]
							  : -1;
	}
	if (r->ngpus == 0) /* no CUDA_VISIBLE_DEVICES: the step's */
		for (int i = 0; i < ns; i++)
			r->gpus[r->ngpus++] = s[i];
	if (r->ngpus == 0)
		return 1;
	*whole = ns == 0 || r->ngpus == ns;
	for (int i = 0; i < r->ngpus; i++)
		if (r->gpus[i] < 0 || r->gpus[i] >= n->ngpus) {
			snprintf(why, size,
				 "GPU %d is not one of this node's GPU0..%d "
				 "(gres.conf not from this topology?)",
				 r->gpus[i], n->ngpus - 1);
			return -1;
		}
	return 0;
}

static void gpu_text(const struct gf_bind_request *r, char *out, size_t size)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < r->ngpus && len + 8 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%d",
					i ? "," : "", r->gpus[i]);
}

static void nic_text(const struct gf_node *n, const struct gf_bind_plan *p,
		     char *out, size_t size)
{
	size_t len = 0;
	snprintf(out, size, "none");
	for (int i = 0; i < p->nnics && len + 40 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					i ? "," : "", n->nics[p->nics[i]].name);
}

int gf_tb_plan(const struct gf_node *n, const struct gf_tb_opts *o,
	       const struct gf_bind_request *r, bool whole, int task,
	       int ntasks, const char *cores, struct gf_tb_result *out,
	       char *why, size_t size)
{
	struct gf_err e;
	gf_err_clear(&e);
	memset(out, 0, sizeof(*out));
	if (gf_bind_plan(n, r, &out->plan, &e) != 0) {
		snprintf(why, size, "%s", e.msg);
		return -1;
	}
	char g[128], nic[256], cl[1024], ml[128], ll[1024];
	gpu_text(r, g, sizeof(g));
	nic_text(n, &out->plan, nic, sizeof(nic));
	if (o->mode == GF_TB_NIC) {
		snprintf(out->say, sizeof(out->say), "GPUs %s: NIC %s", g, nic);
		return 0;
	}
	if (!out->plan.locality_known) {
		snprintf(out->say, sizeof(out->say),
			 "GPUs %s: locality unknown, CPUs and memory left to "
			 "Slurm; NIC %s",
			 g, nic);
		return 0;
	}
	out->local = out->plan.cpus;
	if (cores && *cores) {
		struct gf_bitmap ac, step;
		if (gf_bitmap_parse_list(&ac, cores) != 0) {
			snprintf(why, size,
				 "cannot read the step's cores '%.60s'", cores);
			return -1;
		}
		gf_slurm_core_cpus(n, &ac, &step);
		gf_bitmap_and(&out->local, &step);
		if (gf_bitmap_is_empty(&out->local)) {
			gf_bitmap_format_list(&step, cl, sizeof(cl));
			gf_bitmap_format_list(&out->plan.cpus, ll, sizeof(ll));
			snprintf(out->say, sizeof(out->say),
				 "GPUs %s: none of the step's CPUs (%.300s) "
				 "is local to them (%.300s): CPUs and memory "
				 "left to Slurm; NIC %s",
				 g, cl, ll, nic);
			return 0;
		}
	}
	if (whole && ntasks > 1)
		gf_bind_split(n, &out->local, ntasks, task, &out->cpus);
	else
		out->cpus = out->local;
	out->mems = out->plan.mems;
	out->bind = true;
	gf_bitmap_format_list(&out->cpus, cl, sizeof(cl));
	gf_bitmap_format_list(&out->mems, ml, sizeof(ml));
	gf_bitmap_format_list(&out->local, ll, sizeof(ll));
	snprintf(out->say, sizeof(out->say),
		 "task %d of %d: GPUs %s: CPUs %.300s (of %.300s local to "
		 "them), memory node %s, NIC %s",
		 task, ntasks, g, cl, ll, ml, nic);
	return 0;
}
