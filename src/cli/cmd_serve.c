/*
 * cmd_serve.c - `gpufleet serve`: the controller.  Options and output
 * around controller/service.h.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli/cli.h"
#include "controller/service.h"
#include "server/server.h"
#include "server/tls.h"
#include "util/fmt.h"
#include "util/log.h"

#define CMD "serve"

static void usage(FILE *f)
{
	const struct gf_route *r;
	int n = gf_service_routes(&r);
	fprintf(f,
		"usage: gpufleet serve [--listen 127.0.0.1:9500] [--db URL] "
		"[--config FILE]\n"
		"                      [--nodes FILE | --agents] "
		"[--token-file FILE] [--tick MS]\n"
		"                      [--k8s-extender [--kubeconfig FILE | "
		"--k8s-api URL]]\n"
		"                      [--tls-cert FILE --tls-key FILE "
		"[--client-ca FILE]]\n"
		"                      [--max-conns N] [--max-conns-per-client "
		"N]\n"
		"\n"
		"The controller: a durable queue of GPU jobs with typed "
		"quotas, fair share,\ngangs inside one block, preemption and "
		"backfill, placed by the placement\nengine on the nodes whose "
		"agents joined.  HTTP API (JSON):\n");
	for (int i = 0; i < n; i++) {
		const char *m = r[i].methods & GF_HTTP_POST	? "POST"
				: r[i].methods & GF_HTTP_PUT	? "PUT"
				: r[i].methods & GF_HTTP_DELETE ? "DELETE"
								: "GET";
		fprintf(f, "  %-6s %-29s %s\n", m, r[i].pattern, r[i].help);
	}
	fprintf(f,
		"\n"
		"  --listen ADDR:PORT  (default " GF_SERVE_DEFAULT_LISTEN
		"); anything but loopback\n"
		"                      needs --token-file, and TLS (or "
		"--insecure-http)\n"
		"  --tls-cert FILE     serve https: the server's certificate "
		"(PEM, chain)\n"
		"  --tls-key FILE      and its private key (PEM)\n"
		"  --client-ca FILE    the CA whose client certificates may "
		"call /k8s (the\n"
		"                      extender's tlsConfig; asked of every "
		"client, needed by none\n"
		"                      but /k8s)\n"
		"  --insecure-http     a token file on a non-loopback address "
		"without TLS:\n"
		"                      tokens then cross the network in clear\n"
		"  --db URL            sqlite:PATH (default " GF_SERVE_DEFAULT_DB
		")\n"
		"                      or postgres://... (two servers may "
		"share one: one leads)\n"
		"  --config FILE       YAML: policy, classes, teams and "
		"quotas, pools, blocks\n"
		"                      (docs/controller.md); default: "
		"built-in classes, open teams\n"
		"  --nodes FILE        node CSV (sn,cpu_milli,memory_mib,gpu,"
		"model); default: the\n"
		"                      config's pools, else the built-in "
		"cluster\n"
		"  --agents            no node but those whose agents join "
		"(gpufleet agent\n"
		"                      --controller URL); the config's agents: "
		"section sets\n"
		"                      heartbeats and when a silent node's "
		"jobs are requeued\n"
		"  --token-file FILE   'TOKEN admin', 'TOKEN team:NAME', 'TOKEN "
		"node:NAME' lines;\n"
		"                      requests then need 'Authorization: "
		"Bearer TOKEN'\n"
		"  --tick MS           scheduling pass period (default 100)\n" GF_CLI_CONN_HELP
		"                      (the open-file limit is raised to its "
		"hard limit;\n"
		"                      connections stay under it)\n"
		"  --k8s-extender      serve the Kubernetes scheduler "
		"extender under /k8s\n"
		"                      (urlPrefix https://HOST:PORT/k8s; "
		"docs/kubernetes.md); with\n"
		"                      --token-file its routes need a client "
		"certificate signed\n"
		"                      by --client-ca (kube-scheduler sends no "
		"token)\n"
		"  --kubeconfig FILE   the API server bind writes to (default: "
		"in-cluster config)\n"
		"  --k8s-context NAME  the kubeconfig's context (default: its "
		"current one)\n"
		"  --k8s-api URL       the API server at URL with no "
		"credentials (kubectl proxy)\n"
		"  --k8s-class NAME    the class of pods' jobs (default: the "
		"highest priority\n"
		"                      class that is not preemptible)\n"
		"  --k8s-resync S      pod-list resync period, 0 never "
		"(default 30)\n"
		"  --k8s-filter-best N filter answers the N best nodes that "
		"fit, by score;\n"
		"                      0 every node that fits (default 16)\n"
		"\n"
		"SIGTERM or SIGINT stop it cleanly: every accepted job is "
		"already committed.\n" GF_CLI_EXIT_HELP,
		(unsigned)GF_SERVE_CONNECTIONS, (unsigned)GF_SERVE_PER_CLIENT);
}

struct serve_args {
	struct gf_service_opts o;
	struct gf_k8s_opts k8s;
	bool k8s_on;
	const char *config;
	const char *token_file;
	const char *tls_cert, *tls_key, *client_ca;
	bool insecure_http;
};

/*
 * TLS's usage rules: the certificate and its key together, a client CA
 * only with them; tokens never in clear on a non-loopback address unless
 * --insecure-http says so; with tokens, the /k8s routes authenticate
 * kube-scheduler by its client certificate, so they need --client-ca
 * (refused here rather than served open).  0 or GF_EXIT_USAGE.
 */
static int tls_check(const struct serve_args *a)
{
	bool tls = a->tls_cert && a->tls_key;
	if (!!a->tls_cert != !!a->tls_key || (a->client_ca && !tls)) {
		gf_cli_error(CMD, "%s",
			     a->client_ca && !a->tls_cert && !a->tls_key
				     ? "--client-ca needs --tls-cert and "
				       "--tls-key"
				     : "--tls-cert and --tls-key go together");
		return GF_EXIT_USAGE;
	}
	if (a->token_file && !tls && !a->insecure_http &&
	    strncmp(a->o.listen, "127.", 4) != 0) {
		gf_cli_error(CMD,
			     "'--listen %s' is not loopback: the tokens of "
			     "--token-file would cross the network in clear; "
			     "give --tls-cert and --tls-key, or "
			     "--insecure-http",
			     a->o.listen);
		return GF_EXIT_USAGE;
	}
	if (a->k8s_on && a->token_file && !a->client_ca) {
		gf_cli_error(CMD,
			     "--k8s-extender with --token-file needs "
			     "--tls-cert, --tls-key and --client-ca: the /k8s "
			     "routes then take kube-scheduler's client "
			     "certificate, as it sends no token "
			     "(docs/kubernetes.md)");
		return GF_EXIT_USAGE;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct serve_args *a, bool *done)
{
	long resync_s = -1, per_client = -1, best = -1;
	const struct gf_cli_opt opts[] = {
		GF_OPT_STR("listen", &a->o.listen),
		GF_OPT_STR("db", &a->o.db),
		GF_OPT_STR("config", &a->config),
		GF_OPT_STR("nodes", &a->o.nodes_csv),
		GF_OPT_STR("token-file", &a->token_file),
		GF_OPT_DURATION_MS("tick", &a->o.tick_ms, 0.001, 60,
				   GF_DUR_BARE_MS),
		GF_OPT_FLAG("agents", &a->o.agents_only),
		GF_OPT_FLAG("k8s-extender", &a->k8s_on),
		GF_OPT_STR("kubeconfig", &a->k8s.kubeconfig),
		GF_OPT_STR("k8s-context", &a->k8s.context),
		GF_OPT_ARG("k8s-api", 'A'),
		GF_OPT_STR("k8s-class", &a->k8s.cls),
		GF_OPT_DURATION("k8s-resync", &resync_s, 0, 86400,
				GF_DUR_BARE_S),
		GF_OPT_NUM("k8s-filter-best", &best, 0, GF_K8S_FILTER_BEST_MAX,
			   "a node count"),
		GF_OPT_STR("tls-cert", &a->tls_cert),
		GF_OPT_STR("tls-key", &a->tls_key),
		GF_OPT_STR("client-ca", &a->client_ca),
		GF_OPT_FLAG("insecure-http", &a->insecure_http),
		GF_CLI_CONN_OPTS(&a->o.max_connections, &per_client),
		GF_OPT_END,
	};
	struct gf_cli_args args = GF_CLI_ARGS(CMD, argc, argv, opts, usage);
	args.no_args = true;
	while (gf_cli_next(&args) != -1) { /* 'A', --k8s-api */
		a->k8s.api_url = optarg;
		if (strncmp(optarg, "http://", 7) &&
		    strncmp(optarg, "https://", 8))
			(void)gf_cli_bad_value(&args,
					       "expected http://HOST:PORT "
					       "or https://HOST:PORT");
	}
	if (resync_s >= 0)
		a->k8s.resync_ms = resync_s ? resync_s * 1000 : -1;
	if (best >= 0)
		a->k8s.filter_best = best ? best : -1;
	gf_cli_conn_limits(per_client, &a->o.max_per_client);
	if (args.rc >= 0) {
		*done = true; /* -h answered, or a bad option said */
		return args.rc;
	}
	const char *why = gf_server_listen_check(a->o.listen);
	if (why) {
		gf_cli_error(CMD, "cannot parse '--listen %s': %s", a->o.listen,
			     why);
		return GF_EXIT_USAGE;
	}
	if (a->k8s_on)
		a->o.k8s = &a->k8s;
	else if (a->k8s.kubeconfig || a->k8s.api_url || a->k8s.cls ||
		 a->k8s.context || a->k8s.resync_ms || a->k8s.filter_best) {
		gf_cli_error(CMD, "the --k8s-* options and --kubeconfig need "
				  "--k8s-extender");
		return GF_EXIT_USAGE;
	}
	if (strncmp(a->o.listen, "127.", 4) != 0 && !a->token_file) {
		gf_cli_error(CMD,
			     "'--listen %s' is not loopback: give "
			     "--token-file, so that only holders of a token "
			     "can submit",
			     a->o.listen);
		return GF_EXIT_USAGE;
	}
	return tls_check(a);
}

/*
 * Every connection is a file descriptor: the soft open-file limit raised
 * to the hard one, and the connections kept under what was had (with
 * room for the store, the listening socket and the spare slots), so that
 * a full server refuses connections instead of failing every accept and
 * open.  The limit had, and in *from the soft limit found when it was
 * raised (0 when not).
 */
static unsigned long long open_files(struct gf_service_opts *o,
				     unsigned long long *from)
{
	struct rlimit rl;
	*from = 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur != rl.rlim_max) {
		struct rlimit want = { rl.rlim_max, rl.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &want) == 0) {
			*from = (unsigned long long)rl.rlim_cur;
			rl.rlim_cur = rl.rlim_max;
		} else {
			gf_cli_error(CMD,
				     "warning: cannot raise the open-file "
				     "limit from %llu to %llu: %s",
				     (unsigned long long)rl.rlim_cur,
				     (unsigned long long)rl.rlim_max,
				     gf_strerror(-errno));
		}
	}
	unsigned long long had = rl.rlim_cur == RLIM_INFINITY
					 ? ~0ull
					 : (unsigned long long)rl.rlim_cur;
	unsigned want =
		o->max_connections ? o->max_connections : GF_SERVE_CONNECTIONS;
	/* the spare slots (server.c) and 64 files for the rest */
	unsigned long long need = (unsigned long long)want + want / 16 + 68;
	if (need > had) {
		unsigned long long fit = had > 256 ? (had - 68) * 16 / 17 : 64;
		/* a warning when --max-conns asked for more; the default
		 * just fits the machine (the start line says how many) */
		if (o->max_connections)
			gf_cli_error(CMD,
				     "warning: %llu open files allowed (the "
				     "hard limit; ulimit -Hn, LimitNOFILE= "
				     "under systemd): at most %llu "
				     "connections, not %u: %llu agents at two "
				     "connections each",
				     had, fit, want, fit / 2);
		else
			gf_log(GF_LOG_INFO, CMD,
			       "%llu open files allowed (hard limit): at most "
			       "%llu connections, %llu agents at two each",
			       had, fit, fit / 2);
		o->max_connections = (unsigned)fit;
	}
	return had;
}

/* Wait for SIGTERM/SIGINT or a failure of the service; the exit code. */
static int wait_stop(struct gf_service *s, const sigset_t *set)
{
	for (;;) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		int sig = sigtimedwait(set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			gf_log(GF_LOG_INFO, CMD, "signal %d: stopping", sig);
			return GF_EXIT_OK;
		}
		char msg[GF_ERR_MSG_MAX];
		if (gf_service_failed(s, msg, sizeof(msg))) {
			gf_cli_error(CMD, "%s", msg);
			return GF_EXIT_FAIL;
		}
	}
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args a = { .o = { .listen = GF_SERVE_DEFAULT_LISTEN,
				       .db = GF_SERVE_DEFAULT_DB } };
	bool done = false;
	int rc = parse_args(argc, argv, &a, &done);
	if (rc || done)
		return rc;
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_serve_config cfg;
	gf_serve_config_defaults(&cfg);
	struct gf_auth auth = { 0 };
	struct gf_tls tls = { 0 };
	int ret = GF_EXIT_FAIL;
	if (a.config && gf_serve_config_read(a.config, &cfg, &e) != 0) {
		gf_cli_error(CMD, "--config: %s", e.msg);
		goto out;
	}
	if (a.token_file) {
		if (gf_auth_read(a.token_file, &auth, &e) != 0) {
			gf_cli_error(CMD, "--token-file: %s", e.msg);
			goto out;
		}
		if (auth.loose_mode)
			gf_cli_error(CMD,
				     "warning: '%s' is readable by others "
				     "(chmod 600 it)",
				     a.token_file);
		a.o.auth = &auth;
	}
	if (a.tls_cert) {
		if (gf_tls_load(&tls, a.tls_cert, a.tls_key, a.client_ca, &e)) {
			gf_cli_error(CMD, "%s", e.msg);
			goto out;
		}
		a.o.tls = &tls;
	}
	a.o.cfg = &cfg;
	unsigned long long from;
	unsigned long long files = open_files(&a.o, &from);
	sigset_t set;
	gf_cli_block_stop(&set);
	struct gf_service *s;
	if (gf_service_start(&s, &a.o, &e) != 0) {
		gf_cli_error(CMD, "%s", e.msg);
		goto out;
	}
	unsigned conns = a.o.max_connections ? a.o.max_connections
					     : GF_SERVE_CONNECTIONS;
	char raised[64] = "";
	if (from)
		gf_note(raised, sizeof(raised), ", raised from %llu", from);
	fprintf(stderr,
		"gpufleet serve: listening on %s (store %s; up to %u "
		"connections: %u agents at two each; %llu open files%s)\n",
		gf_service_url(s), a.o.db, conns, conns / 2, files, raised);
	ret = wait_stop(s, &set);
	gf_service_stop(s);
out:
	if (a.token_file)
		gf_auth_release(&auth);
	gf_tls_release(&tls);
	gf_serve_config_release(&cfg);
	return ret;
}
