/*
 * autoscale_source.c - the live loop's metric: the queue depth from a
 * Prometheus text page (the controller's /metrics: gpufleet_queue_pending_jobs
 * {class,team}, docs/controller.md) or from Prometheus' HTTP API
 * (GET /api/v1/query?query=..., the answer's vector summed).  The
 * parsers are separate from the HTTP so tests feed them text.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/autoscale.h"
#include "server/client.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/log.h"

/* One label pair of a sample line; *p after the closing quote. */
static bool read_label(const char **p, char *name, size_t nsize, char *val,
		       size_t vsize)
{
	const char *s = *p;
	size_t n = 0;
	while (isalnum((unsigned char)*s) || *s == '_') {
		if (n + 1 < nsize)
			name[n++] = *s;
		s++;
	}
	name[n] = '\0';
	if (n == 0 || *s != '=' || s[1] != '"')
		return false;
	s += 2;
	n = 0;
	while (*s && *s != '"') {
		char c = *s++;
		if (c == '\\') {
			c = *s++;
			if (c == 'n')
				c = '\n';
			else if (c != '\\' && c != '"')
				return false;
		}
		if (n + 1 < vsize)
			val[n++] = c;
	}
	val[n] = '\0';
	if (*s != '"')
		return false;
	*p = s + 1;
	return true;
}

/* Whether a sample line's labels hold every filter; *p past the '}'. */
static int match_labels(const char **p, const struct gf_as_source *src,
			bool *match)
{
	const char *s = *p;
	bool seen[GF_AS_LABELS_MAX] = { false };
	while (*s && *s != '}') {
		char name[128], val[256];
		if (!read_label(&s, name, sizeof(name), val, sizeof(val)))
			return GF_EPARSE;
		for (int i = 0; i < src->nlabels; i++)
			if (!strcmp(name, src->labels[i][0]) &&
			    !strcmp(val, src->labels[i][1]))
				seen[i] = true;
		if (*s == ',')
			s++;
	}
	if (*s != '}')
		return GF_EPARSE;
	*p = s + 1;
	*match = true;
	for (int i = 0; i < src->nlabels; i++)
		*match = *match && seen[i];
	return 0;
}

static int sample_line(const char *line, const struct gf_as_source *src,
		       bool *hit, double *v)
{
	size_t ml = strlen(src->metric);
	*hit = false;
	if (strncmp(line, src->metric, ml) ||
	    (line[ml] != '{' && line[ml] != ' ' && line[ml] != '\t'))
		return 0;
	const char *p = line + ml;
	bool match = src->nlabels == 0;
	if (*p == '{') {
		p++;
		int rc = match_labels(&p, src, &match);
		if (rc)
			return rc;
	}
	char *end;
	double x = strtod(p, &end);
	if (end == p)
		return GF_EPARSE;
	if (match) {
		*hit = true;
		*v = x;
	}
	return 0;
}

int gf_as_parse_metrics_page(const char *text, size_t len,
			     const struct gf_as_source *src, double *value,
			     struct gf_err *e)
{
	double sum = 0;
	bool family = false;
	char line[4096];
	long lineno = 0;
	size_t ml = strlen(src->metric);
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		size_t n = j - i < sizeof(line) - 1 ? j - i : sizeof(line) - 1;
		memcpy(line, text + i, n);
		line[n] = '\0';
		i = j + 1;
		lineno++;
		if (line[0] == '#') {
			/* "# TYPE name gauge" / "# HELP name ..." */
			const char *p = line + 1;
			while (*p == ' ')
				p++;
			if ((!strncmp(p, "TYPE ", 5) ||
			     !strncmp(p, "HELP ", 5)) &&
			    !strncmp(p + 5, src->metric, ml) &&
			    (p[5 + ml] == ' ' || p[5 + ml] == '\0'))
				family = true;
			continue;
		}
		if (!line[0])
			continue;
		bool hit;
		double v;
		if (sample_line(line, src, &hit, &v))
			return gf_err_set(e, GF_EPARSE,
					  "metrics page line %ld: not "
					  "Prometheus text: '%.60s'",
					  lineno, line);
		if (hit) {
			family = true;
			sum += v;
		}
	}
	if (!family)
		return gf_err_set(e, GF_ENOTFOUND,
				  "metric '%s' is not on the page",
				  src->metric);
	if (!isfinite(sum) || sum < 0)
		return gf_err_set(e, GF_ERANGE,
				  "metric '%s' sums to %g: not a queue depth",
				  src->metric, sum);
	*value = sum;
	return 0;
}

/* ["<ts>", "<value>"] of Prometheus' JSON: the value string. */
static int pair_value(const struct gf_jv *pair, double *v)
{
	const struct gf_jv *x = gf_jv_at(pair, 1);
	const char *s = gf_jv_str(x);
	if (gf_jv_len(pair) != 2 || !s)
		return GF_EPARSE;
	char *end;
	*v = strtod(s, &end); /* "NaN", "+Inf" parse too: judged later */
	return *end || end == s ? GF_EPARSE : 0;
}

int gf_as_parse_query_answer(const char *json, size_t len, double *value,
			     struct gf_err *e)
{
	struct gf_jv *root;
	struct gf_err pe;
	if (gf_jv_parse(json, len, &root, &pe))
		return gf_err_set(e, GF_EPARSE, "query answer: not JSON (%s)",
				  pe.msg);
	int rc = 0;
	const char *status = gf_jv_str(gf_jv_get(root, "status"));
	const struct gf_jv *data = gf_jv_get(root, "data");
	const char *type = gf_jv_str(gf_jv_get(data, "resultType"));
	const struct gf_jv *res = gf_jv_get(data, "result");
	double sum = 0;
	if (!status || strcmp(status, "success")) {
		const char *err = gf_jv_str(gf_jv_get(root, "error"));
		rc = gf_err_set(e, GF_EPARSE, "query answer: status '%s': %s",
				status ? status : "?", err ? err : "no data");
	} else if (!type || !res) {
		rc = gf_err_set(e, GF_EPARSE,
				"query answer: no data.resultType/result");
	} else if (!strcmp(type, "scalar")) {
		if (pair_value(res, &sum))
			rc = gf_err_set(e, GF_EPARSE,
					"query answer: a bad scalar");
	} else if (!strcmp(type, "vector")) {
		for (size_t i = 0; rc == 0 && i < gf_jv_len(res); i++) {
			double v = 0;
			if (pair_value(gf_jv_get(gf_jv_at(res, i), "value"),
				       &v))
				rc = gf_err_set(e, GF_EPARSE,
						"query answer: element %zu has "
						"no [time, value]",
						i);
			sum += v;
		}
	} else {
		rc = gf_err_set(e, GF_EPARSE,
				"query answer: resultType '%s' (expected "
				"vector or scalar)",
				type);
	}
	gf_jv_free(root);
	if (rc == 0 && (!isfinite(sum) || sum < 0))
		rc = gf_err_set(e, GF_ERANGE,
				"query answer sums to %g: not a queue depth",
				sum);
	if (rc == 0)
		*value = sum;
	return rc;
}

/* RFC 3986: everything but the unreserved characters %-encoded. */
static int url_encode(const char *s, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '_' || c == '.' ||
		    c == '~') {
			if (n + 1 >= size)
				return -1;
			out[n++] = (char)c;
		} else {
			if (n + 3 >= size)
				return -1;
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	out[n] = '\0';
	return 0;
}

int gf_as_source_read(const struct gf_as_source *src, double *value,
		      struct gf_err *e)
{
	char url[8192];
	int rc;
	if (src->kind == GF_AS_SOURCE_PROMQL) {
		char q[6200];
		if (url_encode(src->query, q, sizeof(q)))
			return gf_err_set(e, GF_ETOOBIG, "query too long");
		rc = gf_fmt(url, sizeof(url), "%s/api/v1/query?query=%s",
			    src->base, q);
	} else {
		rc = gf_fmt(url, sizeof(url), "%s%s", src->base,
			    src->path[0] ? src->path : "/metrics");
	}
	if (rc)
		return gf_err_set(e, GF_ETOOBIG,
				  "the metric's URL is too long");
	struct gf_client_req q = { .url = url,
				   .token = src->token,
				   .timeout_ms = src->timeout_ms
							 ? src->timeout_ms
							 : 5000,
				   .answer_max = 16u << 20,
				   .ca = src->ca,
				   .insecure_http = src->insecure_http };
	struct gf_client_answer a;
	rc = gf_client_request(NULL, &q, &a, e);
	if (rc) {
		gf_client_answer_release(&a);
		return rc;
	}
	gf_log(GF_LOG_DEBUG, "autoscale", "GET %s: %ld, %zu bytes, %.1f ms",
	       url, a.status, a.body.len, a.ms);
	if (a.status != 200) {
		rc = gf_err_set(e, GF_EPARSE, "GET %s: HTTP %ld", url,
				a.status);
	} else if (src->kind == GF_AS_SOURCE_PROMQL) {
		rc = gf_as_parse_query_answer(gf_buf_str(&a.body), a.body.len,
					      value, e);
	} else {
		rc = gf_as_parse_metrics_page(gf_buf_str(&a.body), a.body.len,
					      src, value, e);
	}
	gf_client_answer_release(&a);
	return rc;
}

/* sum(NAME{K="V",...}) into out: PromQL's string escapes for the values. */
static int build_query(const struct gf_as_metric_ref *m, char *out, size_t size)
{
	struct gf_buf b;
	gf_buf_init(&b, size);
	gf_buf_printf(&b, "sum(%s", m->name);
	for (int i = 0; i < m->nlabels; i++) {
		gf_buf_printf(&b, "%s%s=\"", i ? "," : "{", m->labels[i][0]);
		for (const char *p = m->labels[i][1]; *p; p++) {
			if (*p == '"' || *p == '\\')
				gf_buf_putc(&b, '\\');
			if (*p == '\n')
				gf_buf_puts(&b, "\\n");
			else
				gf_buf_putc(&b, *p);
		}
		gf_buf_putc(&b, '"');
	}
	gf_buf_printf(&b, "%s)", m->nlabels ? "}" : "");
	int rc =
		gf_buf_error(&b) ? -1 : gf_fmt(out, size, "%s", gf_buf_str(&b));
	gf_buf_release(&b);
	return rc;
}

/* Source i (>= 1) of the loop: first's kind, metric m. */
static int metric_source(const struct gf_as_source *first,
			 const struct gf_as_metric_ref *m, int i,
			 const char *query, struct gf_as_source *out,
			 struct gf_err *e)
{
	static const char *const types[] = { "External", "Pods", "Resource" };
	const char *type = types[m->type];
	if (m->type == GF_AS_METRIC_RESOURCE)
		return gf_err_set(e, GF_EINVAL,
				  "metrics[%d] (line %d): a Resource metric "
				  "('%s'): autoscale run reads External and "
				  "Pods metrics from its source",
				  i, m->line, m->name);
	*out = *first;
	if (first->kind == GF_AS_SOURCE_PROMQL && query) {
		if (gf_fmt(out->query, sizeof(out->query), "%s", query))
			return gf_err_set(e, GF_ETOOBIG,
					  "--query for metrics[%d]: over %zu "
					  "bytes",
					  i, sizeof(out->query) - 1);
		return 0;
	}
	if (!m->name[0])
		return gf_err_set(e, GF_EINVAL,
				  "metrics[%d] (line %d): %s metric without "
				  "metric.name: nothing to read",
				  i, m->line, type);
	if (m->expressions)
		return gf_err_set(e, GF_EINVAL,
				  "metrics[%d] (line %d): metric '%s': "
				  "selector.matchExpressions is not read by "
				  "autoscale run (use matchLabels%s)",
				  i, m->line, m->name,
				  first->kind == GF_AS_SOURCE_PROMQL
					  ? ", or give its --query"
					  : "");
	if (first->kind == GF_AS_SOURCE_PROMQL) {
		if (build_query(m, out->query, sizeof(out->query)))
			return gf_err_set(e, GF_ETOOBIG,
					  "metrics[%d]: the query of '%s' is "
					  "over %zu bytes",
					  i, m->name, sizeof(out->query) - 1);
		return 0;
	}
	if (gf_fmt(out->metric, sizeof(out->metric), "%s", m->name))
		return gf_err_set(e, GF_ETOOBIG,
				  "metrics[%d]: name '%.40s...' is over %zu "
				  "bytes",
				  i, m->name, sizeof(out->metric) - 1);
	out->nlabels = m->nlabels;
	memcpy(out->labels, m->labels, sizeof(out->labels));
	return 0;
}

int gf_as_metric_sources(const struct gf_as_scaler *sc,
			 const struct gf_as_source *first,
			 const char *const *queries, int nqueries,
			 struct gf_as_source *out, int *n, struct gf_err *e)
{
	int nm = sc->kind == GF_AS_HPA && sc->nmetrics > 1 ? sc->nmetrics : 1;
	if (nqueries > nm)
		return gf_err_set(e, GF_EINVAL,
				  "%d --query options for %d metric%s (one "
				  "per entry of spec.metrics, in order)",
				  nqueries, nm, nm == 1 ? "" : "s");
	out[0] = *first;
	for (int i = 1; i < nm; i++) {
		const char *q = i < nqueries ? queries[i] : NULL;
		int rc =
			metric_source(first, &sc->metrics[i], i, q, &out[i], e);
		if (rc)
			return rc;
	}
	*n = nm;
	return 0;
}
