/*
 * prices.c - the prices file of `gpufleet chargeback --prices FILE`:
 *
 *   currency: USD
 *   gpu:                 # per GPU-hour, by the assets' gpu_model
 *     H100: 2.50
 *     L40S: 1.10
 *     default: 0.95      # any model not listed (optional)
 *   cpu_core: 0.031611   # per core-hour
 *   ram_gib: 0.004237    # per GiB-hour
 *   nodes:               # a node's whole price per hour, when that is
 *     n7: 35.0           # all that is known (split by the prices above)
 *   mig_rule: compute    # or memory
 *
 * Every key is known or the file is refused, naming the line; every
 * price a number >= 0.  Models match case-insensitively.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "chargeback/chargeback.h"
#include "util/file.h"
#include "util/mem.h"

#define PRICES_FILE_MAX (4u << 20)

struct rd {
	yaml_document_t *doc;
	const char *path;
	struct gf_err *e;
};

__attribute__((format(printf, 3, 4))) static int
fail(const struct rd *r, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gf_err_set(r->e, GF_EPARSE, "'%s':%d: %s", r->path,
			  n ? (int)n->start_mark.line + 1 : 0, msg);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		       ? (const char *)n->data.scalar.value
		       : NULL;
}

static yaml_node_t *node(const struct rd *r, int id)
{
	return yaml_document_get_node(r->doc, id);
}

static int price(const struct rd *r, const yaml_node_t *n, const char *what,
		 double *out)
{
	const char *s = scalar(n);
	char *end;
	*out = s ? strtod(s, &end) : NAN;
	if (!s || end == s || *end || !isfinite(*out) || *out < 0)
		return fail(r, n, "'%s': expected a price >= 0, got '%.60s'",
			    what, s ? s : "(not a scalar)");
	return 0;
}

static int gpu_map(const struct rd *r, yaml_node_t *m, struct gf_cb_prices *p)
{
	if (m->type != YAML_MAPPING_NODE)
		return fail(r, m, "'gpu': expected model: price lines");
	for (yaml_node_pair_t *pr = m->data.mapping.pairs.start;
	     pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *name = scalar(k);
		double hr;
		int rc = price(r, v, name ? name : "gpu", &hr);
		if (rc)
			return rc;
		if (!name || !*name || strlen(name) >= sizeof(p->model[0]))
			return fail(r, k,
				    "'gpu': a model name of 1 to 63 bytes");
		if (strcmp(name, "default") == 0) {
			p->gpu_default_hr = hr;
			continue;
		}
		if (p->nmodels == GF_CB_MODELS_MAX)
			return fail(r, k, "'gpu': more than %d models",
				    GF_CB_MODELS_MAX);
		snprintf(p->model[p->nmodels], sizeof(p->model[0]), "%s", name);
		p->model_hr[p->nmodels++] = hr;
	}
	return 0;
}

static int node_map(const struct rd *r, yaml_node_t *m, struct gf_cb_prices *p)
{
	if (m->type != YAML_MAPPING_NODE)
		return fail(r, m, "'nodes': expected node: price lines");
	size_t n = (size_t)(m->data.mapping.pairs.top -
			    m->data.mapping.pairs.start);
	if (n > GF_CB_NODES_MAX)
		return fail(r, m, "'nodes': more than %d nodes",
			    GF_CB_NODES_MAX);
	p->node = gf_calloc(n + 1, sizeof(*p->node));
	p->node_hr = gf_calloc(n + 1, sizeof(*p->node_hr));
	for (yaml_node_pair_t *pr = m->data.mapping.pairs.start;
	     pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *name = scalar(k);
		if (!name || !*name || strlen(name) >= sizeof(p->node[0]))
			return fail(r, k,
				    "'nodes': a node name of 1 to 63 "
				    "bytes");
		int rc = price(r, v, name, &p->node_hr[p->nnodes]);
		if (rc)
			return rc;
		snprintf(p->node[p->nnodes++], sizeof(p->node[0]), "%s", name);
	}
	return 0;
}

static int root_key(const struct rd *r, yaml_node_t *k, yaml_node_t *v,
		    struct gf_cb_prices *p)
{
	const char *key = scalar(k), *val = scalar(v);
	if (!key)
		return fail(r, k, "expected a key");
	if (strcmp(key, "gpu") == 0)
		return gpu_map(r, v, p);
	if (strcmp(key, "nodes") == 0)
		return node_map(r, v, p);
	if (strcmp(key, "cpu_core") == 0)
		return price(r, v, key, &p->cpu_core_hr);
	if (strcmp(key, "ram_gib") == 0)
		return price(r, v, key, &p->ram_gib_hr);
	if (strcmp(key, "currency") == 0) {
		if (!val || !*val || strlen(val) >= sizeof(p->currency))
			return fail(r, v, "'currency': 1 to 15 characters");
		snprintf(p->currency, sizeof(p->currency), "%s", val);
		return 0;
	}
	if (strcmp(key, "mig_rule") == 0) {
		p->has_mig_rule = true;
		if (val && strcmp(val, "compute") == 0)
			p->mig_rule = GF_CHARGE_MIG_COMPUTE;
		else if (val && strcmp(val, "memory") == 0)
			p->mig_rule = GF_CHARGE_MIG_MEMORY;
		else
			return fail(r, v,
				    "'mig_rule': expected compute or memory, "
				    "got '%.40s'",
				    val ? val : "(not a scalar)");
		return 0;
	}
	return fail(r, k,
		    "unknown key '%.60s' (expected currency, gpu, cpu_core, "
		    "ram_gib, nodes, mig_rule)",
		    key);
}

void gf_cb_prices_init(struct gf_cb_prices *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->currency, sizeof(p->currency), "USD");
	p->gpu_default_hr = NAN;
	p->cpu_core_hr = NAN;
	p->ram_gib_hr = NAN;
}

void gf_cb_prices_release(struct gf_cb_prices *p)
{
	gf_free(p->node);
	gf_free(p->node_hr);
	p->nnodes = 0;
}

int gf_cb_read_prices(const char *path, struct gf_cb_prices *p,
		      struct gf_err *e)
{
	char *text;
	size_t len;
	int rc = gf_file_read(path, PRICES_FILE_MAX, &text, &len, e);
	if (rc)
		return rc;
	yaml_parser_t ps;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&ps)) {
		gf_free(text);
		return gf_err_set(e, GF_EINVAL, "cannot initialise libyaml");
	}
	yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
	if (!yaml_parser_load(&ps, &doc)) {
		rc = gf_err_set(e, GF_EPARSE, "'%s':%d: malformed YAML: %s",
				path, (int)ps.problem_mark.line + 1,
				ps.problem ? ps.problem : "parse error");
		yaml_parser_delete(&ps);
		gf_free(text);
		return rc;
	}
	struct rd r = { &doc, path, e };
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		rc = fail(&r, root, "expected a mapping of prices");
	for (yaml_node_pair_t *pr = root ? root->data.mapping.pairs.start
					 : NULL;
	     rc == 0 && root && root->type == YAML_MAPPING_NODE &&
	     pr < root->data.mapping.pairs.top;
	     pr++)
		rc = root_key(&r, node(&r, pr->key), node(&r, pr->value), p);
	yaml_document_delete(&doc);
	yaml_parser_delete(&ps);
	gf_free(text);
	return rc;
}

double gf_cb_gpu_price(const struct gf_cb_prices *p, const char *model)
{
	for (int i = 0; model && *model && i < p->nmodels; i++)
		if (strcasecmp(p->model[i], model) == 0)
			return p->model_hr[i];
	return p->gpu_default_hr;
}
