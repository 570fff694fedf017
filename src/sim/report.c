/*
 * report.c - turning per-seed fill results into the tables users read.
 */
#include "sim/report.h"

#include <stdio.h>

#include "util/fmt.h"
#include "util/json.h"

const int gf_report_points[GF_REPORT_NPOINTS] = { 90, 95, 100, 110, 120, 130 };

void gf_fill_summarise(enum gf_policy p, const struct gf_fill_result *runs,
		       const double *wall_s, int nseeds,
		       struct gf_fill_summary *out)
{
	out->policy = p;
	out->nseeds = nseeds;
	out->failed_mean = out->arrivals_mean = out->wall_s_mean = 0;
	for (int i = 0; i < nseeds; i++) {
		out->failed_mean += runs[i].failed;
		out->arrivals_mean += runs[i].arrivals;
		out->wall_s_mean += wall_s[i];
	}
	if (nseeds > 0) {
		out->failed_mean /= nseeds;
		out->arrivals_mean /= nseeds;
		out->wall_s_mean /= nseeds;
	}
	for (int b = 0; b < GF_FILL_BINS; b++) {
		double sum = 0, fr = 0, fa = 0, lo = 1e9, hi = -1e9, v;
		int k = 0;
		for (int i = 0; i < nseeds; i++) {
			const struct gf_fill_result *r = &runs[i];
			if (!gf_fill_value(r, r->alloc_sum, b, &v))
				continue;
			double un = 100.0 - v;
			sum += un;
			lo = un < lo ? un : lo;
			hi = un > hi ? un : hi;
			if (gf_fill_value(r, r->frag_ratio_sum, b, &v))
				fr += v;
			if (gf_fill_value(r, r->frag_amount_sum, b, &v))
				fa += v;
			k++;
		}
		out->have[b] = k == nseeds && k > 0;
		out->unalloc_mean[b] = k ? sum / k : 0;
		out->unalloc_min[b] = k ? lo : 0;
		out->unalloc_max[b] = k ? hi : 0;
		out->frag_ratio_mean[b] = k ? fr / k : 0;
		out->frag_amount_mean[b] = k ? fa / k : 0;
	}
}

void gf_report_seeds_text(const uint64_t *seeds, int nseeds, char *out,
			  size_t size)
{
	if (nseeds == 0) {
		gf_note(out, size, "none");
		return;
	}
	bool range = true;
	for (int i = 1; i < nseeds; i++)
		range &= seeds[i] == seeds[i - 1] + 1;
	if (range && nseeds > 1)
		gf_note(out, size, "%llu-%llu", (unsigned long long)seeds[0],
			(unsigned long long)seeds[nseeds - 1]);
	else
		gf_note(out, size, "%llu%s", (unsigned long long)seeds[0],
			nseeds > 1 ? ",..." : "");
}

static void cell(struct gf_buf *b, const struct gf_fill_summary *s, int pct,
		 int what)
{
	if (!s->have[pct]) {
		gf_buf_printf(b, " %13s", "-");
		return;
	}
	if (what == 0)
		gf_buf_printf(b, " %13.2f", s->unalloc_mean[pct]);
	else
		gf_buf_printf(b, "  %5.2f..%5.2f", s->unalloc_min[pct],
			      s->unalloc_max[pct]);
}

/* The bound's row of the table: its figures; no frag, failed or run
 * time (the time is in the JSON: the text stays the same run to run). */
static void text_bound_row(struct gf_buf *out, const struct gf_report_bound *b)
{
	gf_buf_printf(out, "%-11s", "bound");
	for (int i = 0; i < GF_REPORT_NPOINTS; i++)
		cell(out, b->s, gf_report_points[i], 0);
	gf_buf_printf(out, " %10s %8s %8s\n", "-", "-", "-");
}

int gf_report_text(const struct gf_report_info *info,
		   const struct gf_fill_summary *s, int n, struct gf_buf *out)
{
	char seeds[64];
	gf_report_seeds_text(info->seeds, info->nseeds, seeds, sizeof(seeds));
	char scaled[64];
	if (info->tune > 0)
		gf_note(scaled, sizeof(scaled),
			"demand scaled to %.2fx capacity", info->tune);
	else
		gf_note(scaled, sizeof(scaled), "demand not scaled");
	gf_buf_printf(out,
		      "fill: %s; %d nodes, %lld GPUs; %d requests, %s; "
		      "seeds %s\n\n",
		      info->source, info->nodes, (long long)info->gpus,
		      info->requests, scaled, seeds);
	gf_buf_puts(out,
		    "Unallocated GPU % at arrived load (mean over seeds)\n");
	gf_buf_printf(out, "%-11s", "policy");
	for (int i = 0; i < GF_REPORT_NPOINTS; i++)
		gf_buf_printf(out, " %12d%%", gf_report_points[i]);
	gf_buf_printf(out, " %10s %8s %8s\n", "frag@100%", "failed", "run s");
	for (int p = 0; p < n; p++) {
		gf_buf_printf(out, "%-11s", gf_policy_label(s[p].policy));
		for (int i = 0; i < GF_REPORT_NPOINTS; i++)
			cell(out, &s[p], gf_report_points[i], 0);
		if (s[p].have[100])
			gf_buf_printf(out, " %9.1f%%",
				      s[p].frag_ratio_mean[100]);
		else
			gf_buf_printf(out, " %10s", "-");
		gf_buf_printf(out, " %8.0f %8.3f\n", s[p].failed_mean,
			      s[p].wall_s_mean);
	}
	if (info->bound)
		text_bound_row(out, info->bound);
	gf_buf_puts(out, "\nSpread over seeds (min..max)\n");
	gf_buf_printf(out, "%-11s", "policy");
	for (int i = 0; i < GF_REPORT_NPOINTS; i++)
		gf_buf_printf(out, " %12d%%", gf_report_points[i]);
	gf_buf_putc(out, '\n');
	for (int p = 0; p < n; p++) {
		gf_buf_printf(out, "%-11s", gf_policy_label(s[p].policy));
		for (int i = 0; i < GF_REPORT_NPOINTS; i++)
			cell(out, &s[p], gf_report_points[i], 1);
		gf_buf_putc(out, '\n');
	}
	gf_buf_puts(out, "\nfrag@100%: GPU fragmentation as a share of idle "
			 "GPU at 100 % arrived load;\nfailed: requests no "
			 "node could take (mean per run).\n");
	if (info->bound)
		gf_buf_printf(
			out,
			"bound: no placement of the same arrivals leaves "
			"less unallocated (a linear\nprogram over %d node "
			"types and %d request classes, GLPK; the mean "
			"over\nseeds of each seed's bound; %d programs "
			"solved).\n",
			info->bound->ntypes, info->bound->nclasses,
			info->bound->lps);
	return gf_buf_error(out);
}

static void json_points(struct gf_json *j, const char *key, const double *v,
			const bool *have)
{
	char k[8];
	gf_json_obj_begin(j, key);
	for (int i = 0; i < GF_REPORT_NPOINTS; i++) {
		int pct = gf_report_points[i];
		gf_note(k, sizeof(k), "%d", pct);
		if (have[pct])
			gf_json_double(j, k, v[pct]);
		else
			gf_json_null(j, k);
	}
	gf_json_obj_end(j);
}

/* One compact array of the bins the curve has, on one line. */
static void json_curve_row(struct gf_json *j, struct gf_buf *tmp,
			   const char *key, const struct gf_fill_summary *s,
			   const double *v)
{
	gf_buf_reset(tmp);
	gf_buf_putc(tmp, '[');
	bool first = true;
	for (int b = 0; b < GF_FILL_BINS; b++) {
		if (!s->have[b])
			continue;
		if (v)
			gf_buf_printf(tmp, "%s%.6g", first ? "" : ", ", v[b]);
		else
			gf_buf_printf(tmp, "%s%d", first ? "" : ", ", b);
		first = false;
	}
	gf_buf_putc(tmp, ']');
	if (gf_buf_error(tmp) && j->err == 0)
		j->err = gf_buf_error(tmp);
	gf_json_raw(j, key, gf_buf_str(tmp), tmp->len);
}

/* The per-percent curve (as --curve writes it), column by column. */
static void json_curve(struct gf_json *j, const struct gf_fill_summary *s)
{
	struct gf_buf tmp;
	gf_buf_init(&tmp, 1u << 20);
	gf_json_obj_begin(j, "curve");
	json_curve_row(j, &tmp, "arrived_pct", s, NULL);
	json_curve_row(j, &tmp, "unallocated_mean", s, s->unalloc_mean);
	json_curve_row(j, &tmp, "unallocated_min", s, s->unalloc_min);
	json_curve_row(j, &tmp, "unallocated_max", s, s->unalloc_max);
	json_curve_row(j, &tmp, "frag_ratio_mean", s, s->frag_ratio_mean);
	json_curve_row(j, &tmp, "frag_amount_mean", s, s->frag_amount_mean);
	gf_json_obj_end(j);
	gf_buf_release(&tmp);
}

static void json_bound(struct gf_json *j, const struct gf_report_bound *b)
{
	gf_json_obj_begin(j, "bound");
	char k[8];
	gf_json_obj_begin(j, "unallocated_pct");
	for (int i = 0; i < GF_REPORT_NPOINTS; i++) {
		int pct = gf_report_points[i];
		gf_note(k, sizeof(k), "%d", pct);
		if (b->s->have[pct])
			gf_json_double(j, k, b->s->unalloc_mean[pct]);
		else
			gf_json_null(j, k);
	}
	gf_json_obj_end(j);
	gf_json_str(j, "of", "mean over seeds of each seed's bound");
	json_points(j, "unallocated_pct_min", b->s->unalloc_min, b->s->have);
	json_points(j, "unallocated_pct_max", b->s->unalloc_max, b->s->have);
	gf_json_int(j, "node_types", b->ntypes);
	gf_json_int(j, "request_classes", b->nclasses);
	gf_json_int(j, "programs", b->lps);
	gf_json_double(j, "wall_s", b->wall_s);
	gf_json_obj_end(j);
}

int gf_report_json(const struct gf_report_info *info,
		   const struct gf_fill_summary *s, int n, struct gf_buf *out)
{
	struct gf_json j;
	gf_json_init(&j, out);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "source", info->source);
	gf_json_int(&j, "nodes", info->nodes);
	gf_json_int(&j, "gpus", info->gpus);
	gf_json_int(&j, "requests", info->requests);
	if (info->tune > 0)
		gf_json_double(&j, "tune", info->tune);
	else /* not scaled: there is no factor */
		gf_json_null(&j, "tune");
	gf_json_arr_begin(&j, "seeds");
	for (int i = 0; i < info->nseeds; i++)
		gf_json_uint(&j, NULL, info->seeds[i]);
	gf_json_arr_end(&j);
	gf_json_obj_begin(&j, "policies");
	for (int p = 0; p < n; p++) {
		gf_json_obj_begin(&j, gf_policy_name(s[p].policy));
		gf_json_obj_begin(&j, "unallocated_pct");
		json_points(&j, "mean", s[p].unalloc_mean, s[p].have);
		json_points(&j, "min", s[p].unalloc_min, s[p].have);
		json_points(&j, "max", s[p].unalloc_max, s[p].have);
		gf_json_obj_end(&j);
		gf_json_obj_begin(&j, "frag_ratio_pct");
		json_points(&j, "mean", s[p].frag_ratio_mean, s[p].have);
		gf_json_obj_end(&j);
		gf_json_double(&j, "failed_mean", s[p].failed_mean);
		gf_json_double(&j, "arrivals_mean", s[p].arrivals_mean);
		gf_json_double(&j, "wall_s", s[p].wall_s_mean);
		json_curve(&j, &s[p]);
		gf_json_obj_end(&j);
	}
	gf_json_obj_end(&j);
	if (info->bound)
		json_bound(&j, info->bound);
	gf_json_obj_end(&j);
	return gf_json_error(&j);
}

int gf_report_curve_csv(const struct gf_fill_summary *s, int n,
			struct gf_buf *out)
{
	gf_buf_puts(out, "policy,arrived_pct,unallocated_mean,unallocated_min,"
			 "unallocated_max,frag_ratio_mean,frag_amount_mean\n");
	for (int p = 0; p < n; p++)
		for (int b = 0; b < GF_FILL_BINS; b++)
			if (s[p].have[b])
				gf_buf_printf(out,
					      "%s,%d,%.4f,%.4f,%.4f,%.4f,"
					      "%.4f\n",
					      gf_policy_name(s[p].policy), b,
					      s[p].unalloc_mean[b],
					      s[p].unalloc_min[b],
					      s[p].unalloc_max[b],
					      s[p].frag_ratio_mean[b],
					      s[p].frag_amount_mean[b]);
	return gf_buf_error(out);
}
