/*
 * taskbind.c - one task's binding inside a Slurm step (taskbind.h).
 *
 * Invariants: a task's CPUs are always within the step's allocation when
 * it is known (never a CPU Slurm gave another job); the tasks sharing a
 * GPU set get disjoint whole-core shares (gf_bind_split) of the GPUs'
 * local CPUs within the step, widened by the step's nearest cores when
 * those hold fewer cores than tasks: cores are shared only when the step
 * has fewer cores than tasks; the plan itself is gf_bind_plan's.
 */
#include "slurm/taskbind.h"

#include <stdio.h>
#include <string.h>

#include "slurm/gres.h"
#include "util/fmt.h"

int gf_tb_parse(const char *s, struct gf_tb_opts *o, char *why, size_t size)
{
	struct gf_tb_opts r = { .mode = GF_TB_CLOSEST };
	bool mode = false;
	if (!s || !*s) {
		gf_note(why, size, "empty value");
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
			gf_note(why, size,
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

/* One argument into a (unless seen before: *seen); 0, or -1 with why. */
static int one_arg(const char *arg, struct gf_tb_args *a, unsigned *seen,
		   char *why, size_t size)
{
	static const char *const keys[] = { "default=", "topology=", "nvml=" };
	int k = 0;
	while (k < 3 && strncmp(arg, keys[k], strlen(keys[k])) != 0)
		k++;
	if (k == 3) {
		gf_note(why, size,
			"unknown argument '%.200s' (default=MODE, "
			"topology=FILE, nvml=0|1)",
			arg);
		return -1;
	}
	const char *v = arg + strlen(keys[k]);
	char w[256];
	if (*seen & (1u << k)) {
		gf_note(why, size, "'%.200s': %.9s given twice", arg, keys[k]);
		return -1;
	}
	*seen |= 1u << k;
	if (k == 0 && gf_tb_parse(v, &a->def, w, sizeof(w)) != 0) {
		gf_note(why, size, "'%.200s': %s", arg, w);
		return -1;
	}
	if (k == 1 && (!*v || strlen(v) >= sizeof(a->topology))) {
		gf_note(why, size, "'%.200s': %s", arg,
			*v ? "path too long" : "empty file name");
		return -1;
	}
	if (k == 1 && gf_fmt(a->topology, sizeof(a->topology), "%s", v))
		return -1; /* cannot: its length is checked above */
	if (k == 2 && strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
		gf_note(why, size, "'%.200s': expected nvml=0 or nvml=1", arg);
		return -1;
	}
	if (k == 2)
		a->nvml = v[0] - '0';
	return 0;
}

int gf_tb_args(int ac, const char *const *av, struct gf_tb_args *out,
	       void (*say)(void *ctx, const char *msg), void *ctx)
{
	struct gf_tb_args a = { .def = { .mode = GF_TB_NONE } };
	unsigned seen = 0;
	int bad = 0;
	for (int i = 0; i < ac; i++) {
		char why[512];
		if (one_arg(av[i] ? av[i] : "", &a, &seen, why, sizeof(why))) {
			say(ctx, why);
			bad++;
		}
	}
	memset(out, 0, sizeof(*out));
	out->def.mode = GF_TB_NONE;
	if (bad == 0)
		*out = a;
	return bad;
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
			gf_note(why, size,
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
		gf_note(why, size, "cannot read the step's GPUs '%.60s'", step);
		return -1;
	}
	if (cvd && strncmp(cvd, "GPU-", 4) == 0 &&
	    by_uuid(n, cvd, r, why, size))
		return -1;
	if (cvd && r->ngpus == 0) {
		int v[GF_MAX_GPUS];
		int nv = id_list(cvd, v, GF_MAX_GPUS);
		if (nv < 0) {
			gf_note(why, size,
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
			gf_note(why, size,
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
	gf_note(out, size, "none");
	for (int i = 0; i < p->nnics && len + 40 < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					i ? "," : "", n->nics[p->nics[i]].name);
}

/* How far PU pu is from the GPUs' CPUs (p->cpus): 1 on their NUMA
 * node(s), 2 in their package(s), 3 elsewhere. */
static int distance(const struct gf_node *n, const struct gf_bind_plan *p,
		    int pu)
{
	for (int i = 0; i < n->nnuma; i++)
		if (gf_bitmap_isset(&p->mems, n->numa[i].os_index) &&
		    gf_bitmap_isset(&n->numa[i].cpus, pu))
			return 1;
	int q;
	gf_bitmap_for_each(q, &p->cpus)
	{
		if (n->pu_package[q] >= 0 &&
		    n->pu_package[q] == n->pu_package[pu])
			return 2;
	}
	return 3;
}

/* Add to pool the step's whole cores nearest the GPUs until pool holds
 * want cores or the step has no more. */
static void widen(const struct gf_node *n, const struct gf_bind_plan *p,
		  const struct gf_bitmap *step, int want,
		  struct gf_bitmap *pool)
{
	int have = gf_bind_cores(n, pool, NULL);
	for (int d = 1; d <= 3 && have < want; d++) {
		int pu, q;
		gf_bitmap_for_each(pu, step)
		{
			if (have >= want)
				break;
			if (gf_bitmap_isset(pool, pu) ||
			    distance(n, p, pu) != d)
				continue;
			gf_bitmap_for_each(q, step)
			{
				if (q == pu ||
				    (n->pu_core[q] >= 0 &&
				     n->pu_core[q] == n->pu_core[pu]))
					gf_bitmap_set(pool, q);
			}
			have++;
		}
	}
}

/* The tasks' share of the GPUs' CPUs (out->local) into out->cpus, the
 * step's nearest cores added when local has too few; a note for say. */
static void share(const struct gf_node *n, const struct gf_bitmap *step,
		  int task, int ntasks, struct gf_tb_result *out, char *note,
		  size_t size)
{
	char l[512];
	out->pool = out->local;
	note[0] = '\0';
	int have = gf_bind_cores(n, &out->local, NULL);
	if (have < ntasks && step)
		widen(n, &out->plan, step, ntasks, &out->pool);
	int c = gf_bind_cores(n, &out->pool, NULL);
	if (c > have) {
		gf_bitmap_format_list(&out->pool, l, sizeof(l));
		gf_note(note, size,
			"; %d tasks, %d cores local to the GPUs: the step's "
			"nearest added, %.300s",
			ntasks, have, l);
	}
	if (c < ntasks)
		gf_note(note + strlen(note), size - strlen(note),
			"; %d tasks share %d cores: the step has no more",
			ntasks, c);
	gf_bind_split(n, &out->pool, ntasks, task, &out->cpus);
}

/*
 * A task with its own GPUs (r, a part of the step's sg): the tasks whose
 * GPUs share the locality of r's split its CPUs in the step.  As Slurm
 * deals GPUs to tasks in order (--gpus-per-task, gpu-bind per_task),
 * the step's G GPUs of that locality serve G/k tasks of k GPUs each, the
 * task's rank among them its first GPU's place / k.  Only when every GPU
 * of r has that locality and G is a multiple of k; else the task keeps
 * the locality's CPUs as they are.
 */
static void own_share(const struct gf_node *n, const struct gf_bind_request *r,
		      const struct gf_bind_request *sg,
		      struct gf_tb_result *out, char *note, size_t size)
{
	const struct gf_bitmap *loc = &n->gpus[r->gpus[0]].cpus;
	out->cpus = out->pool = out->local;
	for (int i = 1; i < r->ngpus; i++)
		if (!gf_bitmap_equal(&n->gpus[r->gpus[i]].cpus, loc))
			return;
	int m = 0, at = -1;
	for (int i = 0; i < sg->ngpus; i++) {
		int g = sg->gpus[i];
		if (g < 0 || g >= n->ngpus ||
		    !gf_bitmap_equal(&n->gpus[g].cpus, loc))
			continue;
		if (g == r->gpus[0])
			at = m;
		m++;
	}
	int peers = r->ngpus ? m / r->ngpus : 0;
	if (at < 0 || peers < 2 || m % r->ngpus != 0)
		return;
	gf_bind_split(n, &out->local, peers, at / r->ngpus, &out->cpus);
	int c = gf_bind_cores(n, &out->local, NULL);
	gf_note(note, size, "; %d tasks on GPUs of this locality%s", peers,
		c < peers ? ", sharing its cores: the step has no more" : "");
}

int gf_tb_plan(const struct gf_node *n, const struct gf_tb_opts *o,
	       const struct gf_bind_request *r, bool whole, int task,
	       int ntasks, const char *cores, struct gf_tb_result *out,
	       char *why, size_t size)
{
	return gf_tb_plan_step(n, o, r, NULL, whole, task, ntasks, cores, out,
			       why, size);
}

int gf_tb_plan_step(const struct gf_node *n, const struct gf_tb_opts *o,
		    const struct gf_bind_request *r,
		    const struct gf_bind_request *sg, bool whole, int task,
		    int ntasks, const char *cores, struct gf_tb_result *out,
		    char *why, size_t size)
{
	struct gf_err e;
	gf_err_clear(&e);
	memset(out, 0, sizeof(*out));
	if (gf_bind_plan(n, r, &out->plan, &e) != 0) {
		gf_note(why, size, "%s", e.msg);
		return -1;
	}
	char g[128], nic[256], cl[1024], ml[128], ll[1024];
	gpu_text(r, g, sizeof(g));
	nic_text(n, &out->plan, nic, sizeof(nic));
	if (o->mode == GF_TB_NIC) {
		gf_note(out->say, sizeof(out->say), "GPUs %s: NIC %s", g, nic);
		return 0;
	}
	if (!out->plan.locality_known) {
		gf_note(out->say, sizeof(out->say),
			"GPUs %s: locality unknown, CPUs and memory left to "
			"Slurm; NIC %s",
			g, nic);
		return 0;
	}
	out->local = out->plan.cpus;
	struct gf_bitmap ac, step;
	bool step_known = cores && *cores;
	if (step_known) {
		if (gf_bitmap_parse_list(&ac, cores) != 0) {
			gf_note(why, size,
				"cannot read the step's cores '%.60s'", cores);
			return -1;
		}
		gf_slurm_core_cpus(n, &ac, &step);
		gf_bitmap_and(&out->local, &step);
		if (gf_bitmap_is_empty(&out->local)) {
			gf_bitmap_format_list(&step, cl, sizeof(cl));
			gf_bitmap_format_list(&out->plan.cpus, ll, sizeof(ll));
			gf_note(out->say, sizeof(out->say),
				"GPUs %s: none of the step's CPUs (%.300s) "
				"is local to them (%.300s): CPUs and memory "
				"left to Slurm; NIC %s",
				g, cl, ll, nic);
			return 0;
		}
	}
	char note[700] = "";
	if (whole && ntasks > 1)
		share(n, step_known ? &step : NULL, task, ntasks, out, note,
		      sizeof(note));
	else if (!whole && sg && r->ngpus > 0)
		own_share(n, r, sg, out, note, sizeof(note));
	else
		out->cpus = out->pool = out->local;
	out->mems = out->plan.mems;
	out->bind = true;
	gf_bitmap_format_list(&out->cpus, cl, sizeof(cl));
	gf_bitmap_format_list(&out->mems, ml, sizeof(ml));
	gf_bitmap_format_list(&out->local, ll, sizeof(ll));
	gf_note(out->say, sizeof(out->say),
		"task %d of %d: GPUs %.100s: CPUs %.300s (of %.300s local "
		"to them), memory node %.60s, NIC %.100s%.300s",
		task, ntasks, g, cl, ll, ml, nic, note);
	return 0;
}
