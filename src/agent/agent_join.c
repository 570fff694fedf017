/*
 * agent_join.c - `gpufleet agent --controller URL`: the options that make
 * the agent a node of a cluster, and the link (join.h) started beside
 * the agent's sampler.  agent_cmd.c parses the rest.
 */
#include "agent/agent_join.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gpufleet/cluster.h>
#include <gpufleet/findings.h>

#include "server/auth.h"
#include "server/client.h"
#include "topo/render.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/str.h"

#define DEFAULT_STATE "gpufleet-agent-state"

void gf_agent_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gpufleet agent: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void gf_agent_join_defaults(struct gf_agent_join_args *a)
{
	memset(a, 0, sizeof(*a));
	a->state_dir = DEFAULT_STATE;
	a->kill_grace_ms = 10000;
}

/* "k=v" appended to a->labels; 0 or an exit code. */
static int add_label(struct gf_agent_join_args *a, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t len = strlen(a->labels);
	if (!eq || eq == kv || !eq[1] || strpbrk(kv, ", ") ||
	    strchr(eq + 1, '=')) {
		gf_agent_say("cannot parse '--label %s': expected KEY=VALUE "
			     "without ',', ' ' or a second '='",
			     kv);
		return GF_AGENT_EXIT_USAGE;
	}
	if (len + strlen(kv) + 2 > sizeof(a->labels)) {
		gf_agent_say("--label: more than %zu bytes of labels",
			     sizeof(a->labels) - 1);
		return GF_AGENT_EXIT_USAGE;
	}
	if (gf_fmt(a->labels + len, sizeof(a->labels) - len, "%s%s",
		   len ? "," : "", kv) != 0) /* cannot be: measured above */
		return GF_AGENT_EXIT_USAGE;
	return 0;
}

bool gf_agent_join_option(int c, const char *arg, struct gf_agent_join_args *a,
			  int *rc)
{
	*rc = 0;
	switch (c) {
	case 'C': {
		const char *why = gf_client_base_url(arg, 9500, a->controller,
						     sizeof(a->controller));
		if (why) {
			gf_agent_say("cannot parse '--controller %s': %s", arg,
				     why);
			*rc = GF_AGENT_EXIT_USAGE;
		}
		return true;
	}
	case 'L':
		*rc = add_label(a, arg);
		return true;
	case 'B':
		if (!arg[0] || strlen(arg) >= GF_NODE_NAME_MAX ||
		    strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
				"TUVWXYZ0123456789._-") != strlen(arg)) {
			gf_agent_say("cannot parse '--block %s': expected a "
				     "name of letters, digits, '.', '_', '-' "
				     "under %d bytes",
				     arg, GF_NODE_NAME_MAX);
			*rc = GF_AGENT_EXIT_USAGE;
		}
		a->block = arg;
		return true;
	case 'G': {
		long ms = gf_diag_parse_duration(arg);
		if (ms < 0 || ms > 3600000) {
			gf_agent_say("cannot parse '--kill-grace %s': expected "
				     "0s to 1h, like 10s",
				     arg);
			*rc = GF_AGENT_EXIT_USAGE;
		}
		a->kill_grace_ms = ms;
		return true;
	}
	default:
		return false;
	}
}

int gf_agent_join_check(struct gf_agent_join_args *a, const char *listen)
{
	bool joining = a->controller[0] != '\0';
	if (!joining && (a->name || a->token_file || a->labels[0] ||
			 a->address || a->block || a->ca || a->insecure_http ||
			 a->default_user || a->one_connection)) {
		gf_agent_say(
			"--name, --token-file, --label, --block, --address, "
			"--ca, --insecure-http, --default-user and "
			"--one-connection go with --controller");
		return GF_AGENT_EXIT_USAGE;
	}
	if (a->default_user && !gf_str_is_login(a->default_user)) {
		gf_agent_say("cannot parse '--default-user %s': expected a "
			     "login name",
			     a->default_user);
		return GF_AGENT_EXIT_USAGE;
	}
	if (!joining)
		return 0;
	if (a->ca && access(a->ca, R_OK) != 0) {
		gf_agent_say("cannot read --ca '%s': %s", a->ca,
			     gf_strerror(-errno));
		return GF_AGENT_EXIT_USAGE;
	}
	char why[256];
	if (a->token_file &&
	    !gf_client_token_safe(a->controller, a->insecure_http, why,
				  sizeof(why))) {
		gf_agent_say("--controller: %s", why);
		return GF_AGENT_EXIT_USAGE;
	}
	if (!a->name) {
		if (gethostname(a->host, sizeof(a->host)) != 0 || !a->host[0]) {
			gf_agent_say("no host name: give --name NODE");
			return GF_AGENT_EXIT_USAGE;
		}
		a->host[sizeof(a->host) - 1] = '\0';
		a->name = a->host;
	}
	if (!a->address) { /* the --listen address, unless every one */
		const char *colon = strrchr(listen, ':');
		size_t n = colon ? (size_t)(colon - listen) : 0;
		if (n && n < sizeof(a->addr_buf) &&
		    strncmp(listen, "0.0.0.0", n) != 0) {
			memcpy(a->addr_buf, listen, n);
			a->addr_buf[n] = '\0';
			a->address = a->addr_buf;
		} else {
			a->address = a->name;
		}
	}
	return 0;
}

/* The token of the node's line in the token file ("TOKEN node:NAME"; an
 * admin's also serves); NULL with the error printed. */
static const char *read_token(struct gf_agent_join_args *a)
{
	struct gf_err e;
	struct gf_auth auth;
	if (gf_auth_read(a->token_file, &auth, &e) != 0) {
		gf_agent_say("--token-file: %s", e.msg);
		return NULL;
	}
	if (auth.loose_mode)
		gf_agent_say("warning: '%s' is readable by others (chmod 600 "
			     "it)",
			     a->token_file);
	const char *tok = NULL;
	for (int i = 0; i < auth.n && !tok; i++)
		if (!strcmp(auth.e[i].node, a->name))
			tok = auth.e[i].token;
	for (int i = 0; i < auth.n && !tok; i++)
		if (auth.e[i].admin)
			tok = auth.e[i].token;
	if (tok && gf_fmt(a->token, sizeof(a->token), "%s", tok) != 0) {
		gf_agent_say("--token-file '%s': a token longer than %zu bytes",
			     a->token_file, sizeof(a->token) - 1);
		tok = NULL;
	} else if (!tok)
		gf_agent_say("--token-file '%s': no 'TOKEN node:%s' line (nor "
			     "an admin's)",
			     a->token_file, a->name);
	gf_auth_release(&auth);
	return tok ? a->token : NULL;
}

int gf_agent_join_start(struct gf_agent_join_args *a,
			const struct gf_node_source *topo,
			struct gf_agent *agent, const char *version)
{
	if (!a->controller[0])
		return 0;
	if (a->token_file && !read_token(a))
		return GF_AGENT_EXIT_USAGE;
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_node_source src = *topo;
	src.cpu_only = gf_agent_cpu_node(agent) != NULL;
	if (gf_node_source_load(&src, &a->node, &e) != 0) {
		gf_agent_say("%s", e.msg);
		return GF_AGENT_EXIT_FAIL;
	}
	struct gf_buf b;
	gf_buf_init(&b, 8u << 20);
	if (gf_render_topo_json(a->node, false, NULL, 0, &b) == 0)
		a->topology = gf_strndup(gf_buf_str(&b), b.len);
	gf_buf_release(&b);
	struct gf_join_opts o = {
		.controller = a->controller,
		.name = a->name,
		.token = a->token_file ? a->token : NULL,
		.ca = a->ca,
		.insecure_http = a->insecure_http,
		.one_connection = a->one_connection,
		.labels = a->labels,
		.block = a->block,
		.address = a->address,
		.agent_url = gf_agent_url(agent),
		.version = version,
		.state_dir = a->state_dir,
		.node = a->node,
		.topology = a->topology,
		.bind = a->node->this_system,
		.cgroup = true,
		.kill_grace_ms = a->kill_grace_ms,
		.default_user = a->default_user,
		.agent = agent,
	};
	if (gf_join_start(&a->join, &o, &e) != 0) {
		gf_agent_say("%s", e.msg);
		gf_agent_join_stop(a);
		return GF_AGENT_EXIT_FAIL;
	}
	fprintf(stderr,
		"gpufleet agent: node '%s' joining %s (state in %s, jobs %s)\n",
		a->name, a->controller, a->state_dir,
		!o.bind	       ? "not bound: the topology is not this machine"
		: src.cpu_only ? "bound to CPUs of this node"
			       : "bound to their GPUs' CPUs and memory");
	return 0;
}

void gf_agent_join_stop(struct gf_agent_join_args *a)
{
	gf_join_stop(a->join);
	a->join = NULL;
	gf_node_free(a->node);
	a->node = NULL;
	gf_free(a->topology);
	a->topology = NULL;
}
