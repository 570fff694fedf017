/*
 * common.c - what the commands share: error reporting, output, and the
 * node loading every topology command does first (live machine, XML file
 * or template, with NVML joined when asked).
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
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

/* The subcommand NAME of row t when it is one of group g's ("GROUP
 * NAME"), or NULL. */
static const char *sub_name(const struct gf_cmd *t, const struct gf_cmd *g)
{
	size_t len = strlen(g->name);
	if (strncmp(t->name, g->name, len) || t->name[len] != ' ')
		return NULL;
	return t->name + len + 1;
}

/* The names of g's subcommands into out: "a, b, c", or "a, b or c" with
 * or. */
static void sub_names(const struct gf_cmd *table, size_t n,
		      const struct gf_cmd *g, bool or, struct gf_buf *out)
{
	size_t count = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		count += sub_name(&table[i], g) != NULL;
	for (size_t i = 0; i < n; i++) {
		const char *name = sub_name(&table[i], g);
		if (!name)
			continue;
		if (k++)
			gf_buf_puts(out, or &&k == count ? " or " : ", ");
		gf_buf_puts(out, name);
	}
}

/* What a gf_cli_subcommand says when its argument is missing or unknown:
 * g's own text, or one made from the table's names. */
static void subs_error(const struct gf_cmd *table, size_t n,
		       const struct gf_cmd *g, const char *name)
{
	struct gf_buf b;
	gf_buf_init(&b, 1024);
	if (!name && g->missing) {
		gf_buf_puts(&b, g->missing);
	} else if (!name) {
		gf_buf_puts(&b, "say what: ");
		sub_names(table, n, g, true, &b);
		gf_buf_printf(&b, " (see 'gpufleet %s -h')", g->name);
	} else {
		gf_buf_printf(&b, "unknown %s '%s' ",
			      g->what ? g->what : "subcommand", name);
		if (g->known) {
			gf_buf_puts(&b, g->known);
		} else {
			gf_buf_puts(&b, "(known: ");
			sub_names(table, n, g, false, &b);
			gf_buf_putc(&b, ')');
		}
	}
	gf_cli_error(g->name, "%s", gf_buf_str(&b));
	gf_buf_release(&b);
}

int gf_cli_subcommand(const struct gf_cmd *table, size_t n,
		      const struct gf_cmd *g, int argc, char **argv)
{
	if (argc < 2) {
		subs_error(table, n, g, NULL);
		return GF_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		g->usage(stdout);
		return GF_EXIT_OK;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = sub_name(&table[i], g);
		if (name && !strcmp(argv[1], name))
			return table[i].fn(argc - 1, argv + 1);
	}
	subs_error(table, n, g, argv[1]);
	return GF_EXIT_USAGE;
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
	gf_cli_error(cmd, "unexpected argument '%s' (see 'gpufleet %s -h')",
		     argv[optind], cmd);
	return GF_EXIT_USAGE;
}

void gf_cli_block_stop(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

int gf_cli_print_buf(const char *cmd, int rc, const struct gf_buf *b)
{
	if (rc == 0 && !gf_buf_error(b))
		return gf_cli_print(gf_buf_str(b), b->len);
	gf_cli_error(cmd, "cannot write the output: larger than %zu MiB",
		     b->cap >> 20);
	return GF_EXIT_FAIL;
}

int gf_cli_print(const char *s, unsigned long len)
{
	if (fwrite(s, 1, len, stdout) != len || fflush(stdout) != 0) {
		perror("gpufleet: cannot write output");
		return GF_EXIT_FAIL;
	}
	return GF_EXIT_OK;
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

int gf_cli_fgdplus_without(const char *cmd, const char *s, unsigned *mask)
{
	*mask = 0;
	if (s && gf_fgdplus_terms_parse(s, mask) != 0) {
		gf_cli_error(cmd,
			     "--fgdplus-without '%s': expected a comma list "
			     "of stranded, packing, pressure",
			     s);
		return GF_EXIT_USAGE;
	}
	return 0;
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
