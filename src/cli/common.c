/*
 * common.c - what the commands share: error reporting, output, and the
 * node loading every topology command does first (live machine, XML file
 * or template, with NVML joined when asked).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "server/server.h"
#include "sim/progress.h"
#include "util/buf.h"
#include "util/fmt.h"

void gf_cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gpufleet %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int gf_cli_bad_option(const char *cmd, char **argv)
{
	const char *opt = argv[optind - 1];
	if (optopt && optopt != '?' && (opt[0] != '-' || opt[1] != '-'))
		gf_cli_error(cmd,
			     "option '-%c' is unknown or needs a value "
			     "(see 'gpufleet %s -h')",
			     optopt, cmd);
	else
		gf_cli_error(cmd,
			     "option '%s' is unknown or needs a value "
			     "(see 'gpufleet %s -h')",
			     opt, cmd);
	return GF_EXIT_USAGE;
}

/* Option c taken by what a names (json, node, store): true. */
static bool taken(struct gf_cli_args *a, int c)
{
	if (c == 'j' && a->json) {
		*a->json = true;
		return true;
	}
	if (a->node && gf_cli_node_option(c, optarg, a->node))
		return true;
	if (a->remote && gf_remote_option(a->remote, c, optarg))
		return true;
	if (c == 'P' && a->policies) /* a bad list is not taken */
		return !gf_cli_policies(a->cmd, optarg, a->policies,
					a->npolicies);
	return a->store && gf_cli_store_take(a->store, c, optarg);
}

bool gf_cli_store_take(const struct gf_cli_store *store, int c, const char *arg)
{
	for (const struct gf_cli_store *s = store; s->code; s++) {
		if (s->code != c)
			continue;
		if (s->str)
			*s->str = arg;
		else
			*s->flag = true;
		return true;
	}
	return false;
}

int gf_cli_next(struct gf_cli_args *a)
{
	if (!a->started) {
		optind = 1;
		opterr = 0;
		a->started = true;
		a->rc = -1;
	}
	const char *shortopts = a->shortopts ? a->shortopts : "h";
	int c;
	do
		c = getopt_long(a->argc, a->argv, shortopts, a->opts,
				&a->index);
	while (c != -1 && taken(a, c));
	if (c == 'P' && a->policies) {
		a->rc = GF_EXIT_USAGE;
		return -1;
	}
	if (a->parse && c != -1 && c != 'h' && c != '?' && c != ':') {
		if (a->parse(c, optarg, a->ctx) == 0)
			return gf_cli_next(a);
		gf_cli_error(a->cmd, "cannot parse '--%s %s'",
			     a->opts[a->index].name, optarg);
		a->rc = GF_EXIT_USAGE;
		return -1;
	}
	if (c == 'h') {
		a->usage(stdout);
		a->rc = GF_EXIT_OK;
		return -1;
	}
	if (c == '?' || c == ':') {
		a->rc = gf_cli_bad_option(a->cmd, a->argv);
		return -1;
	}
	return c;
}

/* The table's names into out: "a, b, c", or "a, b or c" with or. */
static void sub_names(const struct gf_cmd *table, bool or, struct gf_buf *out)
{
	for (const struct gf_cmd *t = table; t->name; t++) {
		if (t != table)
			gf_buf_puts(out, or &&!t[1].name ? " or " : ", ");
		gf_buf_puts(out, t->name);
	}
}

/* What a gf_cli_subcommand says when its argument is missing or unknown:
 * s's own text, or one made from the table's names. */
static void subs_error(const struct gf_cli_subs *s, const char *name)
{
	struct gf_buf b;
	gf_buf_init(&b, 1024);
	if (!name && s->missing) {
		gf_buf_puts(&b, s->missing);
	} else if (!name) {
		gf_buf_puts(&b, "say what: ");
		sub_names(s->table, true, &b);
		gf_buf_printf(&b, " (see 'gpufleet %s -h')", s->cmd);
	} else {
		gf_buf_printf(&b, "unknown %s '%s' ",
			      s->what ? s->what : "subcommand", name);
		if (s->known) {
			gf_buf_puts(&b, s->known);
		} else {
			gf_buf_puts(&b, "(known: ");
			sub_names(s->table, false, &b);
			gf_buf_putc(&b, ')');
		}
	}
	gf_cli_error(s->cmd, "%s", gf_buf_str(&b));
	gf_buf_release(&b);
}

int gf_cli_subcommand(const struct gf_cli_subs *s, int argc, char **argv)
{
	if (argc < 2) {
		subs_error(s, NULL);
		return GF_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		s->usage(stdout);
		return GF_EXIT_OK;
	}
	for (const struct gf_cmd *t = s->table; t->name; t++)
		if (!strcmp(argv[1], t->name))
			return t->fn(argc - 1, argv + 1);
	subs_error(s, argv[1]);
	return GF_EXIT_USAGE;
}

int gf_cli_options(struct gf_cli_args *a)
{
	while (gf_cli_next(a) != -1)
		continue; /* every option is taken inside */
	return a->rc;
}

int gf_cli_arg_copy(const char *cmd, const char *opt, const char *s, char *buf,
		    size_t size)
{
	if (gf_fmt(buf, size, "%s", s) == 0)
		return 0;
	gf_cli_error(cmd, "cannot parse '%s %.40s...': longer than %zu bytes",
		     opt, s, size - 1);
	return -1;
}

int gf_cli_no_args(const char *cmd, int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	gf_cli_error(cmd, "unexpected argument '%s'", argv[optind]);
	return GF_EXIT_USAGE;
}

int gf_cli_print(const char *s, unsigned long len)
{
	if (fwrite(s, 1, len, stdout) != len || fflush(stdout) != 0) {
		perror("gpufleet: cannot write output");
		return GF_EXIT_FAIL;
	}
	return GF_EXIT_OK;
}

bool gf_cli_node_option(int c, const char *arg, struct gf_node_opts *o)
{
	switch (c) {
	case 'x':
		o->src.xml = arg;
		return true;
	case 'X':
		o->src.nccl_xml = arg;
		return true;
	case 't':
		o->src.template_name = arg;
		return true;
	case 'S':
		o->src.this_system = true;
		return true;
	case 'N':
		o->src.nvml = 1;
		return true;
	case 'n':
		o->src.nvml = 0;
		return true;
	default:
		return false;
	}
}

int gf_cli_node_check(const struct gf_node_opts *o)
{
	if (!!o->src.xml + !!o->src.nccl_xml + !!o->src.template_name > 1) {
		gf_cli_error(o->cmd,
			     "--xml, --nccl-xml and --template exclude each "
			     "other");
		return GF_EXIT_USAGE;
	}
	if (o->src.this_system && o->src.xml == NULL) {
		gf_cli_error(o->cmd, "--this-system goes with --xml");
		return GF_EXIT_USAGE;
	}
	return 0;
}

struct gf_node *gf_cli_load_node(const struct gf_node_opts *o)
{
	struct gf_node *n;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_node_source_load(&o->src, &n, &e) != 0) {
		gf_cli_error(o->cmd, "%s", e.msg);
		return NULL;
	}
	return n;
}

int gf_cli_node_get(const struct gf_node_opts *o, struct gf_node **n)
{
	if (gf_cli_node_check(o) != 0)
		return GF_EXIT_USAGE;
	*n = gf_cli_load_node(o);
	return *n ? 0 : GF_EXIT_FAIL;
}

/* --policy LIST: names, comma-separated, or all; a repeated one counts
 * once. */
int gf_cli_policies(const char *cmd, const char *s, enum gf_policy *out, int *n)
{
	*n = 0;
	if (strcmp(s, "all") == 0) {
		for (int i = 0; i < GF_POLICY_COUNT; i++)
			out[(*n)++] = (enum gf_policy)i;
		return 0;
	}
	char buf[256];
	if (gf_cli_arg_copy(cmd, "--policy", s, buf, sizeof(buf)))
		return -1;
	for (char *tok = buf, *next; tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		enum gf_policy p;
		if (gf_policy_parse(tok, &p) != 0) {
			gf_cli_error(cmd,
				     "cannot parse '--policy %s': unknown "
				     "policy '%s' (known: random, dotprod, "
				     "clustering, packing, bestfit, fgd, "
				     "fgdplus, all)",
				     s, tok);
			return -1;
		}
		bool seen = false;
		for (int i = 0; i < *n; i++)
			seen |= out[i] == p;
		if (!seen) /* a repeated one counts once */
			out[(*n)++] = p;
	}
	return 0;
}

bool gf_cli_conn_option(const char *cmd, int c, const char *arg, unsigned *max,
			unsigned *per_client, bool *bad)
{
	if (c != 1101 && c != 1102)
		return false;
	char *end;
	long v = strtol(arg, &end, 10);
	bool ok = *arg && !*end && v >= (c == 1101) && v <= 1000000;
	if (!ok) {
		gf_cli_error(cmd,
			     "cannot parse '--%s %s': expected %s to 1000000",
			     c == 1101 ? "max-conns" : "max-conns-per-client",
			     arg, c == 1101 ? "1" : "0 (no limit)");
		*bad = true;
		return true;
	}
	if (c == 1101)
		*max = (unsigned)v;
	else
		*per_client = v ? (unsigned)v : GF_SERVER_NO_LIMIT;
	return true;
}

int gf_cli_with_progress(const char *cmd,
			 int (*run)(void *arg, struct gf_progress *p),
			 void *arg)
{
	char head[128];
	gf_note(head, sizeof(head), "gpufleet %s", cmd);
	struct gf_progress prog;
	gf_progress_init(&prog, head, stderr);
	(void)!gf_progress_start(&prog); /* without a thread: no line */
	int rc = run(arg, &prog);
	gf_progress_stop(&prog);
	return rc;
}
