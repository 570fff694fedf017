/*
 * migparted.c - mig-parted YAML through libyaml's document API (nodes
 * carry their line), with the unmarshaller's rules (reference
 * mig-and-metrics.md 2.1): unknown keys are errors, `devices` is "all" or
 * a list of indexes, mig-devices is required when mig-enabled is true and
 * must be empty when it is false, counts are >= 0 and not all 0.
 */
#include "mig/migparted.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include <gpufleet/mig.h>

#include "util/file.h"
#include "util/mem.h"

struct rd {
	yaml_document_t *doc;
	const char *path;
	int line0; /* added to node lines (embedded documents) */
	struct gf_err *e;
};

static int line_of(const struct rd *r, const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1 + r->line0;
}

__attribute__((format(printf, 3, 4))) static int
fail(const struct rd *r, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gf_err_set(r->e, GF_EPARSE, "%s:%d: %s", r->path,
			  n ? line_of(r, n) : 0, msg);
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

static int parse_bool(const char *s, bool *out)
{
	if (!s)
		return -1;
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
		*out = false;
		return 0;
	}
	return -1;
}

static int parse_filter(const struct rd *r, yaml_node_t *n,
			struct gf_mp_entry *en)
{
	yaml_node_t *items[GF_MP_MAX_FILTERS];
	int ni = 0;
	if (n->type == YAML_SCALAR_NODE) {
		items[ni++] = n;
	} else if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			if (ni >= GF_MP_MAX_FILTERS)
				return fail(r, n, "more than %d device filters",
					    GF_MP_MAX_FILTERS);
			items[ni++] = node(r, *it);
		}
	} else {
		return fail(r, n,
			    "'device-filter': expected a string or a "
			    "list");
	}
	for (int i = 0; i < ni; i++) {
		const char *s = scalar(items[i]);
		char *end;
		errno = 0;
		unsigned long v = s ? strtoul(s, &end, 16) : 0;
		if (!s || *s == '\0' || *end != '\0' || errno ||
		    v > 0xffffffffUL || strncmp(s, "0x", 2) != 0)
			return fail(r, items[i] ? items[i] : n,
				    "'device-filter': '%s' is not a PCI id "
				    "like 0x20B010DE",
				    s ? s : "?");
		if ((v & 0xffff) != 0x10de)
			return fail(r, items[i],
				    "'device-filter': %s is not an NVIDIA "
				    "device (vendor 10DE)",
				    s);
		en->filters[en->nfilters++] = (uint16_t)(v >> 16);
	}
	return 0;
}

static int parse_devices(const struct rd *r, yaml_node_t *n,
			 struct gf_mp_entry *en)
{
	const char *s = scalar(n);
	if (s) {
		if (strcmp(s, "all") != 0)
			return fail(r, n,
				    "'devices': expected \"all\" or a "
				    "list of GPU indexes, got '%s'",
				    s);
		en->all_devices = true;
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(r, n, "'devices': expected \"all\" or a list");
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *x = node(r, *it);
		const char *v = scalar(x);
		char *end;
		long idx = v ? strtol(v, &end, 10) : -1;
		if (!v || *v == '\0' || *end != '\0' || idx < 0 || idx > 4095)
			return fail(r, x ? x : n,
				    "'devices': '%s' is not a GPU index",
				    v ? v : "?");
		if (en->ndevices >= GF_MP_MAX_DEVICES)
			return fail(r, n, "more than %d devices",
				    GF_MP_MAX_DEVICES);
		en->devices[en->ndevices++] = (int)idx;
	}
	return 0;
}

static int parse_mdev(const struct rd *r, yaml_node_t *n,
		      struct gf_mp_entry *en)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail(r, n,
			    "'mig-devices': expected a map of profile "
			    "to count");
	int total = 0;
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = node(r, pr->key), *v = node(r, pr->value);
		const char *name = scalar(k), *cnt = scalar(v);
		if (!name || !gf_mig_profile_name_ok(name) ||
		    strlen(name) >= sizeof(en->mdev[0].name))
			return fail(r, k ? k : n,
				    "'mig-devices': '%s' is not a MIG "
				    "profile name (like 1g.10gb or 3g.40gb)",
				    name ? name : "?");
		char *end;
		long c = cnt ? strtol(cnt, &end, 10) : -1;
		if (!cnt || *cnt == '\0' || *end != '\0' || c < 0 || c > 64)
			return fail(r, v ? v : n,
				    "'mig-devices': count for '%s' must be a "
				    "number from 0 to 64",
				    name);
		if (en->nmdev >= GF_MP_MAX_MDEV)
			return fail(r, n, "more than %d profiles",
				    GF_MP_MAX_MDEV);
		struct gf_mp_mdev *m = &en->mdev[en->nmdev++];
		snprintf(m->name, sizeof(m->name), "%s", name);
		m->count = (int)c;
		m->line = line_of(r, k);
		total += (int)c;
	}
	if (en->nmdev > 0 && total == 0)
		return fail(r, n, "'mig-devices': every count is 0");
	return 0;
}

static int parse_entry(const struct rd *r, yaml_node_t *n,
		       struct gf_mp_entry *en)
{
	memset(en, 0, sizeof(*en));
	en->line = line_of(r, n);
	if (n->type != YAML_MAPPING_NODE)
		return fail(r, n,
			    "expected a map with devices, mig-enabled, "
			    "mig-devices");
	bool have_dev = false, have_en = false;
	yaml_node_t *mdev = NULL;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(r, p->key), *v = node(r, p->value);
		const char *key = scalar(k);
		int rc = 0;
		if (key && !strcmp(key, "device-filter")) {
			rc = parse_filter(r, v, en);
		} else if (key && !strcmp(key, "devices")) {
			rc = parse_devices(r, v, en);
			have_dev = true;
		} else if (key && !strcmp(key, "mig-enabled")) {
			if (parse_bool(scalar(v), &en->mig_enabled) != 0)
				rc = fail(r, v,
					  "'mig-enabled': expected true "
					  "or false");
			have_en = true;
		} else if (key && !strcmp(key, "mig-devices")) {
			mdev = v;
			rc = parse_mdev(r, v, en);
		} else {
			rc = fail(r, k, "unexpected field '%s'",
				  key ? key : "?");
		}
		if (rc)
			return rc;
	}
	if (!have_dev)
		return fail(r, n, "missing 'devices'");
	if (!have_en)
		return fail(r, n, "missing 'mig-enabled'");
	if (en->mig_enabled && mdev == NULL)
		return fail(r, n,
			    "'mig-enabled' is true but 'mig-devices' is "
			    "missing");
	if (!en->mig_enabled && en->nmdev > 0)
		return fail(r, mdev,
			    "MIG devices included when "
			    "'mig-enabled' is false");
	return 0;
}

static int parse_root(const struct rd *r, yaml_node_t *root,
		      struct gf_mp_file *f)
{
	if (root == NULL || root->type != YAML_MAPPING_NODE)
		return fail(r, root,
			    "expected a map with version and "
			    "mig-configs");
	yaml_node_t *configs = NULL;
	const char *version = NULL;
	yaml_node_t *vnode = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(r, p->key), *v = node(r, p->value);
		const char *key = scalar(k);
		if (key && !strcmp(key, "version")) {
			version = scalar(v);
			vnode = v;
		} else if (key && !strcmp(key, "mig-configs")) {
			configs = v;
		} else {
			return fail(r, k, "unexpected field '%s'",
				    key ? key : "?");
		}
	}
	if (!version)
		return fail(r, root, "missing 'version'");
	if (strcmp(version, "v1") != 0)
		return fail(r, vnode, "unknown version '%s' (expected v1)",
			    version);
	if (!configs || configs->type != YAML_MAPPING_NODE ||
	    configs->data.mapping.pairs.top ==
		    configs->data.mapping.pairs.start)
		return fail(r, configs ? configs : root,
			    "'mig-configs' must be a non-empty map");
	int n = (int)(configs->data.mapping.pairs.top -
		      configs->data.mapping.pairs.start);
	f->configs = gf_calloc((size_t)n, sizeof(*f->configs));
	for (yaml_node_pair_t *p = configs->data.mapping.pairs.start;
	     p < configs->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(r, p->key), *v = node(r, p->value);
		struct gf_mp_config *c = &f->configs[f->n++];
		snprintf(c->name, sizeof(c->name), "%s",
			 scalar(k) ? scalar(k) : "");
		c->line = line_of(r, k);
		snprintf(c->path, sizeof(c->path), "%s", r->path);
		if (v->type != YAML_SEQUENCE_NODE ||
		    v->data.sequence.items.top == v->data.sequence.items.start)
			return fail(r, v,
				    "config '%s': expected a non-empty "
				    "list of entries",
				    c->name);
		int ne = (int)(v->data.sequence.items.top -
			       v->data.sequence.items.start);
		c->entries = gf_calloc((size_t)ne, sizeof(*c->entries));
		for (yaml_node_item_t *it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			int rc = parse_entry(r, node(r, *it),
					     &c->entries[c->n++]);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int load_doc(const char *text, size_t len, yaml_document_t *doc,
		    const char *path, int line0, struct gf_err *e)
{
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return gf_err_set(e, GF_EINVAL, "cannot initialise libyaml");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	int ok = yaml_parser_load(&p, doc);
	int rc = 0;
	if (!ok)
		rc = gf_err_set(e, GF_EPARSE, "%s:%d: malformed YAML: %s", path,
				(int)p.problem_mark.line + 1 + line0,
				p.problem ? p.problem : "parse error");
	yaml_parser_delete(&p);
	return rc;
}

/* A GPU Operator ConfigMap: the mig-parted file is data."config.yaml". */
static yaml_node_t *configmap_payload(yaml_document_t *doc)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return NULL;
	bool is_cm = false;
	yaml_node_t *data = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		if (k && !strcmp(k, "kind") && scalar(v) &&
		    !strcmp(scalar(v), "ConfigMap"))
			is_cm = true;
		if (k && !strcmp(k, "data"))
			data = v;
	}
	if (!is_cm || !data || data->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = data->data.mapping.pairs.start;
	     p < data->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		if (k && !strcmp(k, "config.yaml") && scalar(v))
			return v;
	}
	return NULL;
}

int gf_mp_read(const char *path, struct gf_mp_file *f, struct gf_err *e)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	char *buf;
	size_t len;
	int frc = gf_file_read(path, GF_MP_MAX_FILE, &buf, &len, e);
	if (frc)
		return frc;
	yaml_document_t doc, inner;
	int rc = load_doc(buf, len, &doc, path, 0, e);
	if (rc) {
		gf_free(buf);
		return rc;
	}
	struct rd r = { &doc, path, 0, e };
	yaml_node_t *payload = configmap_payload(&doc);
	if (payload) {
		/* a block scalar: its text starts on the next line */
		int line0 = (int)payload->start_mark.line + 1;
		const char *text = (const char *)payload->data.scalar.value;
		rc = load_doc(text, payload->data.scalar.length, &inner, path,
			      line0, e);
		if (rc == 0) {
			struct rd ri = { &inner, path, line0, e };
			rc = parse_root(&ri,
					yaml_document_get_root_node(&inner), f);
			yaml_document_delete(&inner);
		}
	} else {
		rc = parse_root(&r, yaml_document_get_root_node(&doc), f);
	}
	yaml_document_delete(&doc);
	gf_free(buf);
	if (rc)
		gf_mp_release(f);
	return rc;
}

void gf_mp_release(struct gf_mp_file *f)
{
	for (int i = 0; i < f->n; i++)
		gf_free(f->configs[i].entries);
	gf_free(f->configs);
	f->n = 0;
}

const struct gf_mp_config *gf_mp_find(const struct gf_mp_file *f,
				      const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->configs[i].name, name) == 0)
			return &f->configs[i];
	return NULL;
}

/* Does the entry's profile multiset fit model m?  0, or why in msg. */
static int fits(const struct gf_mig_model *m, const struct gf_mp_entry *en,
		char *msg, size_t size)
{
	int counts[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < en->nmdev; i++) {
		int p = gf_mig_profile_find(m, en->mdev[i].name);
		if (p < 0) {
			snprintf(msg, size, "%s has no profile '%s'", m->id,
				 en->mdev[i].name);
			return -1;
		}
		counts[p] += en->mdev[i].count;
	}
	struct gf_mig_layout l = { .n = 0 };
	if (gf_mig_place(m, counts, &l) != 0) {
		snprintf(msg, size,
			 "these instances do not fit on one %s (memory "
			 "slices, allowed starts or maximum counts)",
			 m->id);
		return -1;
	}
	return 0;
}

/* Is name a profile of some GPU we know, by table or by name only? */
static bool known_name(const char *name, bool *tabled)
{
	*tabled = false;
	for (int k = 0; k < gf_mig_model_count(); k++)
		*tabled |= gf_mig_profile_find(gf_mig_model_at(k), name) >= 0;
	if (*tabled)
		return true;
	for (int k = 0; k < gf_mig_untabled_count(); k++)
		if (gf_mig_untabled_has(gf_mig_untabled_at(k), name))
			return true;
	return false;
}

static bool has_all(const struct gf_mig_model *m, const struct gf_mp_entry *en)
{
	for (int j = 0; j < en->nmdev; j++)
		if (gf_mig_profile_find(m, en->mdev[j].name) < 0)
			return false;
	return true;
}

/* A GPU without a table here that has every profile of the entry. */
static const struct gf_mig_untabled *
untabled_with_all(const struct gf_mp_entry *en)
{
	for (int k = 0; k < gf_mig_untabled_count(); k++) {
		const struct gf_mig_untabled *u = gf_mig_untabled_at(k);
		bool all = true;
		for (int j = 0; j < en->nmdev && all; j++)
			all = gf_mig_untabled_has(u, en->mdev[j].name);
		if (all)
			return u;
	}
	return NULL;
}

/* A compute-instance form, <C>c.<G>g.<N>gb: its GPU instance is known
 * only after the "<C>c." prefix, which our tables do not list. */
static bool ci_form(const char *name)
{
	const char *c = strchr(name, 'c');
	const char *g = strchr(name, 'g');
	return c && g && c < g;
}

/* An entry with a device filter: checked against each filtered model. */
static int validate_filtered(const struct gf_mp_file *f,
			     const struct gf_mp_config *cfg,
			     const struct gf_mp_entry *en, struct gf_buf *out,
			     int *warnings)
{
	int errors = 0;
	char why[200];
	for (int k = 0; k < en->nfilters; k++) {
		const struct gf_mig_model *m =
			gf_mig_model_by_pci(en->filters[k]);
		if (m) {
			if (fits(m, en, why, sizeof(why))) {
				gf_buf_printf(
					out, "%s:%d: error: config '%s': %s\n",
					f->path, en->line, cfg->name, why);
				errors++;
			}
			continue;
		}
		const struct gf_mig_untabled *u =
			gf_mig_untabled_by_pci(en->filters[k]);
		bool bad = false;
		for (int j = 0; u && j < en->nmdev; j++)
			if (!ci_form(en->mdev[j].name) &&
			    !gf_mig_untabled_has(u, en->mdev[j].name)) {
				gf_buf_printf(out,
					      "%s:%d: error: config '%s': "
					      "'%s' is not a profile of the "
					      "%s (0x%04X10DE)\n",
					      f->path, en->mdev[j].line,
					      cfg->name, en->mdev[j].name,
					      u->name, en->filters[k]);
				errors++;
				bad = true;
			}
		if (bad)
			continue;
		gf_buf_printf(out,
			      "%s:%d: warning: config '%s': no MIG table for "
			      "device 0x%04X10DE%s%s%s: profiles checked for "
			      "%s only\n",
			      f->path, en->line, cfg->name, en->filters[k],
			      u ? " (" : "", u ? u->name : "", u ? ")" : "",
			      u ? "name" : "form");
		(*warnings)++;
	}
	return errors;
}

/* An entry without a device filter: every model that has its profiles. */
static int validate_unfiltered(const struct gf_mp_file *f,
			       const struct gf_mp_config *cfg,
			       const struct gf_mp_entry *en, struct gf_buf *out,
			       int *warnings)
{
	int errors = 0;
	bool any_ci = false;
	for (int j = 0; j < en->nmdev; j++) {
		bool tabled;
		if (ci_form(en->mdev[j].name)) {
			any_ci = true;
			continue;
		}
		if (!known_name(en->mdev[j].name, &tabled)) {
			gf_buf_printf(out,
				      "%s:%d: error: config '%s': '%s' is a "
				      "profile of no GPU gpufleet knows "
				      "(neither its tables nor the names "
				      "NVIDIA's configs use)\n",
				      f->path, en->mdev[j].line, cfg->name,
				      en->mdev[j].name);
			errors++;
		}
	}
	if (errors)
		return errors;
	char ok[400] = "", bad[400] = "", why[200] = "";
	size_t lok = 0, lbad = 0;
	int nok = 0, nbad = 0;
	for (int k = 0; k < gf_mig_model_count(); k++) {
		const struct gf_mig_model *m = gf_mig_model_at(k);
		if (!has_all(m, en))
			continue;
		if (fits(m, en, why, sizeof(why)) == 0) {
			if (lok + 40 < sizeof(ok))
				lok += (size_t)snprintf(
					ok + lok, sizeof(ok) - lok, "%s%s",
					nok ? ", " : "", m->id);
			nok++;
		} else {
			if (lbad + 40 < sizeof(bad))
				lbad += (size_t)snprintf(
					bad + lbad, sizeof(bad) - lbad, "%s%s",
					nbad ? ", " : "", m->id);
			nbad++;
		}
	}
	const struct gf_mig_untabled *u = untabled_with_all(en);
	if (nok > 0 && nbad > 0) {
		gf_buf_printf(out,
			      "%s:%d: note: config '%s': valid on %s only; "
			      "these instances do not fit on one %s (memory "
			      "slices, allowed starts or maximum counts)\n",
			      f->path, en->line, cfg->name, ok, bad);
	} else if (nok == 0 && (any_ci || u)) {
		gf_buf_printf(out,
			      "%s:%d: warning: config '%s': %s%s%s: checked "
			      "for %s only\n",
			      f->path, en->line, cfg->name,
			      any_ci ? "compute-instance profiles"
				     : "profiles of ",
			      any_ci ? "" : u->name,
			      any_ci ? "" : " (no MIG table in gpufleet)",
			      any_ci ? "form" : "name");
		(*warnings)++;
	} else if (nok == 0 && nbad > 0) {
		gf_buf_printf(out,
			      "%s:%d: error: config '%s': no MIG-capable GPU "
			      "model can hold these instances together "
			      "(tried: %s)\n",
			      f->path, en->line, cfg->name, bad);
		errors++;
	} else if (nok == 0) {
		gf_buf_printf(out,
			      "%s:%d: error: config '%s': no GPU model has "
			      "all of these profiles\n",
			      f->path, en->line, cfg->name);
		errors++;
	}
	return errors;
}

int gf_mp_validate(const struct gf_mp_file *f, struct gf_buf *out,
		   int *warnings)
{
	int errors = 0;
	*warnings = 0;
	for (int c = 0; c < f->n; c++) {
		const struct gf_mp_config *cfg = &f->configs[c];
		for (int i = 0; i < cfg->n; i++) {
			const struct gf_mp_entry *en = &cfg->entries[i];
			if (!en->mig_enabled || en->nmdev == 0)
				continue;
			errors += en->nfilters > 0
					  ? validate_filtered(f, cfg, en, out,
							      warnings)
					  : validate_unfiltered(f, cfg, en, out,
								warnings);
		}
	}
	return errors;
}
