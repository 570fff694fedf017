/*
 * auth.h - the token file of `gpufleet serve --token-file F` (and of the
 * CLI clients): who a bearer token is.
 *
 *   # TOKEN ROLE [user:LOGIN]
 *   3f9c0a1e5b7d2c4e8a6f0b1d9e3c5a7f  admin
 *   b2d4f6a8c0e1f3a5b7c9d1e3f5a7b9c1  team:vision
 *   a1b2c3d4e5f60718293a4b5c6d7e8f90  team:vision user:alice
 *   c7e9a1b3d5f7092b4d6f8a0c2e4b6d8f  node:gpu-01
 *
 * A user (admin and team tokens only) is the login the token's jobs run
 * as on the nodes: 1 to 32 letters, digits, '_', '-', '.' (issue 21).
 *
 * An admin sees and changes everything; a team token submits, sees and
 * cancels only its own team's jobs; a node token is what that node's
 * agent registers, heartbeats and fetches its assignments with, and
 * nothing else.  Tokens are 16 to 256 characters of [A-Za-z0-9._~+/=-].
 *
 * A check costs one keyed hash (SipHash under a key drawn at start) and
 * one constant-time comparison, whatever the number of tokens: a fleet
 * of 10,000 nodes with a token each is checked as fast as one token, and
 * neither timing nor collisions tell a client anything without the key.
 *
 * Here, on the server's floor (util below it only), so that the
 * controller that checks tokens and the agent and the CLI that read their
 * own from the same file share one reader.
 */
#ifndef GF_SERVER_AUTH_H
#define GF_SERVER_AUTH_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>

#define GF_AUTH_MAX_TOKENS 65536
#define GF_AUTH_TOKEN_MAX  256
#define GF_AUTH_TEAM_MAX   48 /* = GF_TEAM_NAME_MAX (controller/authz.c) */
#define GF_AUTH_NODE_MAX   48 /* = GF_NODE_NAME_MAX (controller/authz.c) */
#define GF_AUTH_USER_MAX   33 /* = GF_JOB_USER_MAX (include/gpufleet/job.h) */

struct gf_auth_entry {
	char token[GF_AUTH_TOKEN_MAX + 1];
	bool admin;
	char team[GF_AUTH_TEAM_MAX]; /* a team token's team, else "" */
	char node[GF_AUTH_NODE_MAX]; /* a node token's node, else "" */
	char user[GF_AUTH_USER_MAX]; /* the login its jobs run as, or "" */
};

struct gf_auth {
	struct gf_auth_entry *e;
	int n;
	bool loose_mode; /* the file is readable by group or others */
	uint8_t key[16]; /* the hash key, drawn at read */
	int *slot;	 /* open addressing: entry + 1, 0 empty */
	uint64_t *hash;	 /* each slot's entry's hash */
	int nslots;	 /* a power of two, at least 2 x n */
};

/* Read path: 0, or -errno / GF_EPARSE / GF_ETOOBIG with e->msg naming
 * file:line.  Release with gf_auth_release. */
int gf_auth_read(const char *path, struct gf_auth *a,
		 struct gf_err *e) GF_MUST_CHECK;
void gf_auth_release(struct gf_auth *a);

/*
 * Who "Authorization: Bearer TOKEN" is: the entry, or NULL (a missing or
 * malformed header, an unknown token).  header may be NULL.
 */
const struct gf_auth_entry *gf_auth_check(const struct gf_auth *a,
					  const char *header);

/* The entry of a bare token, or NULL. */
const struct gf_auth_entry *gf_auth_find(const struct gf_auth *a,
					 const char *token);

/* The first token of the file with this role (admin, or the team), for
 * the CLI clients; NULL when none. */
const char *gf_auth_token_for(const struct gf_auth *a, bool admin,
			      const char *team);

#endif
