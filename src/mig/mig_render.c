/*
 * mig_render.c - MIG plan output, and a proposal's JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mig/render.h"
#include "util/fmt.h"
#include "util/json.h"

static void slices_picture(const struct gf_mig_model *m,
			   const struct gf_mig_layout *l, char *out)
{
	for (int s = 0; s < m->slices; s++)
		out[s] = '.';
	out[m->slices] = '\0';
	for (int i = 0; i < l->n; i++) {
		const struct gf_mig_profile *p =
			&m->profiles[l->inst[i].profile];
		for (int s = 0; s < p->mem; s++)
			out[l->inst[i].start + s] = (char)('A' + i);
	}
}

static void profile_counts(const struct gf_mig_model *m,
			   const struct gf_mig_layout *l, char *out,
			   size_t size)
{
	int counts[GF_MIG_MAX_PROFILES] = { 0 };
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < l->n; i++)
		counts[l->inst[i].profile]++;
	for (int p = 0; p < m->nprofiles; p++)
		if (counts[p] && len + 40 < size) {
			gf_note(out + len, size - len, "%s%dx%s",
				len ? " " : "", counts[p], m->profiles[p].name);
			len += strlen(out + len);
		}
}

/* "1g.10gb +4, 2g.20gb +1": what --fill added, per demand. */
static void filled_list(const struct gf_mig_demand *d,
			const struct gf_mig_plan *p, struct gf_buf *out)
{
	bool any = false;
	for (int k = 0; k < p->ndemands; k++)
		if (p->filled[k] > 0) {
			gf_buf_printf(out, "%s%s +%d", any ? ", " : "",
				      d[k].profile, p->filled[k]);
			any = true;
		}
	if (!any)
		gf_buf_puts(out, "none");
}

static int total_filled(const struct gf_mig_plan *p)
{
	int n = 0;
	for (int k = 0; k < p->ndemands; k++)
		n += p->filled[k];
	return n;
}

int gf_mig_render_text(const struct gf_mig_gpu *gpus,
		       const struct gf_mig_demand *d,
		       const struct gf_mig_plan *p, struct gf_buf *out)
{
	gf_buf_printf(out, "MIG plan for %d GPU%s; demand:", p->ngpus,
		      p->ngpus == 1 ? "" : "s");
	for (int k = 0; k < p->ndemands; k++)
		gf_buf_printf(out, " %s=%d", d[k].profile, d[k].count);
	if (p->fill)
		gf_buf_puts(out, "; --fill");
	gf_buf_puts(out, "\n\n");
	gf_buf_printf(out, "%-5s %-12s %-9s %-8s %s\n", "GPU", "model",
		      "slices", "change", "instances, in creation order");
	for (int i = 0; i < p->ngpus; i++) {
		const struct gf_mig_model *m = gpus[i].model;
		const struct gf_mig_gpu_plan *g = &p->gpus[i];
		char pic[16];
		slices_picture(m, &g->layout, pic);
		const char *change = !g->changed ? "keep"
				     : g->used	 ? "rebuild"
						 : "clear";
		if (g->changed && gpus[i].current.n == 0)
			change = "new";
		gf_buf_printf(out, "%-5d %-12s %-9s %-8s", i, m->id, pic,
			      change);
		if (g->layout.n == 0)
			gf_buf_puts(out, " (free: no MIG instance; usable as a "
					 "whole GPU)");
		for (int j = 0; j < g->layout.n; j++) {
			const struct gf_mig_instance *in = &g->layout.inst[j];
			gf_buf_printf(out, " %c=%s@%d%s%s", 'A' + j,
				      m->profiles[in->profile].name, in->start,
				      in->busy ? "*" : "",
				      gf_mig_inst_in(g->fill, g->nfill, in)
					      ? "+"
					      : "");
		}
		gf_buf_putc(out, '\n');
	}
	gf_buf_printf(out,
		      "\nslices: one letter per memory slice, '.' free; "
		      "'*' a busy instance, kept in place%s\n\n",
		      p->fill ? "; '+' added by --fill beyond the demand" : "");
	long served = 0, demanded = 0;
	for (int k = 0; k < p->ndemands; k++) {
		served += p->served[k];
		demanded += d[k].count;
	}
	double pct = p->demand_units ? 100.0 * (double)p->served_units /
					       (double)p->demand_units
				     : 100.0;
	gf_buf_printf(out,
		      "served:   %ld of %ld instances demanded, %ld of %ld "
		      "units (%.0f%%)\n",
		      served, demanded, p->served_units, p->demand_units, pct);
	gf_buf_printf(out, "GPUs:     %d used, %d free, %d changed",
		      p->used_gpus, p->ngpus - p->used_gpus, p->changed_gpus);
	if (!p->optimal && p->bound_gpus > 0)
		gf_buf_printf(out, " (a bound says at least %.0f used)",
			      p->bound_gpus);
	gf_buf_putc(out, '\n');
	bool any = false;
	for (int k = 0; k < p->ndemands; k++)
		if (p->unserved[k] > 0) {
			gf_buf_printf(out, "%s %s x %d",
				      any ? "," : "unserved:", d[k].profile,
				      p->unserved[k]);
			any = true;
		}
	if (any)
		gf_buf_puts(out, " (the fleet has no room left for them)\n");
	if (p->fill) {
		gf_buf_printf(out,
			      "fill:     %d instance%s beyond the demand on "
			      "the GPUs used (--fill): ",
			      total_filled(p), total_filled(p) == 1 ? "" : "s");
		filled_list(d, p, out);
		gf_buf_putc(out, '\n');
	}
	gf_buf_printf(out,
		      "why:      the most demand first (in units: an "
		      "instance counts its profile's memory slices on the "
		      "model that defines it), then the fewest GPUs, then the "
		      "fewest changes; no instance beyond the demand%s; %s "
		      "(upper bound %.0f units, %.1f ms)\n",
		      p->fill ? " but --fill's" : "",
		      p->optimal ? "proved optimal by the solver"
				 : "best found within the time limit",
		      p->bound_units, p->solve_ms);
	return gf_buf_error(out);
}

static void json_inst(struct gf_json *j, const char *key,
		      const struct gf_mig_model *m,
		      const struct gf_mig_instance *in, int n)
{
	gf_json_arr_begin(j, key);
	for (int i = 0; i < n; i++) {
		gf_json_obj_begin(j, NULL);
		gf_json_str(j, "profile", m->profiles[in[i].profile].name);
		gf_json_int(j, "start", in[i].start);
		gf_json_int(j, "profile_id",
			    m->profiles[in[i].profile].profile_id);
		gf_json_bool(j, "busy", in[i].busy);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}

/* {PROFILE: v[k], ...} over the demands d[0..n-1]. */
static void per_profile(struct gf_json *j, const char *key,
			const struct gf_mig_demand *d, const int *v, int n)
{
	gf_json_obj_begin(j, key);
	for (int k = 0; k < n; k++)
		gf_json_int(j, d[k].profile, v[k]);
	gf_json_obj_end(j);
}

int gf_mig_render_json(const struct gf_mig_gpu *gpus,
		       const struct gf_mig_demand *d,
		       const struct gf_mig_plan *p, struct gf_buf *out)
{
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_arr_begin(&j, "gpus");
	for (int i = 0; i < p->ngpus; i++) {
		const struct gf_mig_gpu_plan *g = &p->gpus[i];
		const struct gf_mig_model *m = gpus[i].model;
		gf_json_obj_begin(&j, NULL);
		gf_json_int(&j, "index", i);
		gf_json_str(&j, "model", m->id);
		gf_json_bool(&j, "used", g->used);
		gf_json_bool(&j, "changed", g->changed);
		json_inst(&j, "instances", m, g->layout.inst, g->layout.n);
		json_inst(&j, "destroy", m, g->destroy, g->ndestroy);
		json_inst(&j, "create", m, g->create, g->ncreate);
		json_inst(&j, "fill", m, g->fill, g->nfill);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_obj_begin(&j, "totals");
	long served = 0, demanded = 0;
	for (int k = 0; k < p->ndemands; k++) {
		served += p->served[k];
		demanded += d[k].count;
	}
	gf_json_int(&j, "served_instances", served);
	gf_json_int(&j, "demand_instances", demanded);
	gf_json_int(&j, "served_units", p->served_units);
	gf_json_int(&j, "demand_units", p->demand_units);
	gf_json_int(&j, "served_slices", p->served_slices);
	gf_json_int(&j, "demand_slices", p->demand_slices);
	gf_json_int(&j, "used_gpus", p->used_gpus);
	gf_json_int(&j, "changed_gpus", p->changed_gpus);
	gf_json_bool(&j, "fill", p->fill);
	gf_json_int(&j, "filled_instances", total_filled(p));
	gf_json_bool(&j, "optimal", p->optimal);
	gf_json_double(&j, "bound_units", p->bound_units);
	gf_json_double(&j, "bound_gpus", p->bound_gpus);
	gf_json_obj_end(&j);
	per_profile(&j, "units", d, p->units, p->ndemands);
	per_profile(&j, "served", d, p->served, p->ndemands);
	per_profile(&j, "unserved", d, p->unserved, p->ndemands);
	per_profile(&j, "filled", d, p->filled, p->ndemands);
	gf_json_obj_end(&j);
	return gf_json_error(&j);
}

int gf_mig_render_yaml(const struct gf_mig_gpu *gpus,
		       const struct gf_mig_demand *d,
		       const struct gf_mig_plan *p, const char *name,
		       struct gf_buf *out)
{
	gf_buf_printf(out,
		      "# written by gpufleet mig plan: apply with\n"
		      "#   nvidia-mig-parted apply -f FILE -c %s\n",
		      name);
	if (p->fill) {
		gf_buf_printf(out,
			      "# --fill: %d instance%s beyond the demand on "
			      "the GPUs used: ",
			      total_filled(p), total_filled(p) == 1 ? "" : "s");
		filled_list(d, p, out);
		gf_buf_putc(out, '\n');
	}
	gf_buf_printf(out, "version: v1\nmig-configs:\n  %s:\n", name);
	bool *done = calloc((size_t)p->ngpus, sizeof(*done));
	for (int i = 0; i < p->ngpus; i++) {
		if (done[i])
			continue;
		char key[256], other[256];
		profile_counts(gpus[i].model, &p->gpus[i].layout, key,
			       sizeof(key));
		gf_buf_printf(out, "    - devices: [%d", i);
		for (int k = i + 1; k < p->ngpus; k++) {
			if (done[k] || gpus[k].model != gpus[i].model)
				continue;
			profile_counts(gpus[k].model, &p->gpus[k].layout, other,
				       sizeof(other));
			if (strcmp(key, other) == 0) {
				done[k] = true;
				gf_buf_printf(out, ", %d", k);
			}
		}
		gf_buf_puts(out, "]\n");
		const struct gf_mig_layout *l = &p->gpus[i].layout;
		if (l->n == 0) {
			gf_buf_puts(out, "      mig-enabled: false\n");
			continue;
		}
		gf_buf_puts(out,
			    "      mig-enabled: true\n      mig-devices:\n");
		int counts[GF_MIG_MAX_PROFILES] = { 0 };
		for (int j = 0; j < l->n; j++)
			counts[l->inst[j].profile]++;
		for (int pi = 0; pi < gpus[i].model->nprofiles; pi++)
			if (counts[pi])
				gf_buf_printf(out, "        \"%s\": %d\n",
					      gpus[i].model->profiles[pi].name,
					      counts[pi]);
	}
	free(done);
	return gf_buf_error(out);
}

int gf_mig_render_proposal_json(const struct gf_mig_proposal *p,
				const char *const *names, struct gf_buf *out)
{
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_arr_begin(&j, "changes");
	for (int i = 0; i < p->nchanges; i++) {
		const struct gf_mig_change *c = &p->changes[i];
		gf_json_obj_begin(&j, NULL);
		if (names)
			gf_json_str(&j, "node", names[c->node]);
		else
			gf_json_int(&j, "node", c->node);
		gf_json_int(&j, "gpu", c->gpu);
		gf_json_str(&j, "model", c->model->id);
		json_inst(&j, "current", c->model, c->current.inst,
			  c->current.n);
		json_inst(&j, "layout", c->model, c->layout.inst, c->layout.n);
		json_inst(&j, "destroy", c->model, c->destroy, c->ndestroy);
		json_inst(&j, "create", c->model, c->create, c->ncreate);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_arr_begin(&j, "demand");
	for (int k = 0; k < p->ndemands; k++) {
		const struct gf_mig_propose_demand *d = &p->demand[k];
		gf_json_obj_begin(&j, NULL);
		gf_json_str_or_null(&j, "model",
				    d->model ? d->model->id : NULL);
		gf_json_str(&j, "profile", d->profile);
		gf_json_int(&j, "count", d->count);
		gf_json_int(&j, "met_before", p->met_before[k]);
		gf_json_int(&j, "met_after", p->met_after[k]);
		gf_json_obj_end(&j);
	}
	gf_json_arr_end(&j);
	gf_json_obj_begin(&j, "totals");
	gf_json_int(&j, "gpus", p->ngpus);
	gf_json_int(&j, "idle_gpus", p->idle);
	gf_json_int(&j, "planned_gpus", p->planned);
	gf_json_int(&j, "changed_gpus", p->nchanges);
	gf_json_int(&j, "demand_instances", p->demanded);
	gf_json_int(&j, "met_before", p->before);
	gf_json_int(&j, "met_after", p->after);
	gf_json_bool(&j, "optimal", p->optimal);
	gf_json_obj_end(&j);
	gf_json_obj_end(&j);
	return gf_json_error(&j);
}
