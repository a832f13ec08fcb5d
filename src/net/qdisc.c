/*
 * qdisc.c - finding and configuring a link's queue discipline (qdisc.h).
 */
#include "aisim/qdisc.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

const qdisc_ops *qdisc_find(const qdisc_ops *const *list, const char *name)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strcmp(list[i]->name, name) == 0)
            return list[i];
    return NULL;
}

#define QDISC_MAX_KEYS 24

/* A qdisc map bound in one go: its kind, then the discipline's settings. */
typedef struct qdisc_scratch {
    cfg_node *kind;
    _Alignas(16) unsigned char conf[256];
} qdisc_scratch;

/* The names of list, "a, b or c", into buf. */
static const char *names_of(const qdisc_ops *const *list, char *buf, size_t len)
{
    size_t n = 0, k = 0;
    while (list && list[n])
        n++;
    buf[0] = 0;
    for (size_t i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                              list[i]->name);
    return n ? buf : "(none registered)";
}

int qdisc_configure(const qdisc_ops *const *list, cfg_node *n, const char *path, port_cfg *pc,
                    void *(*conf_alloc)(void *ctx, size_t size), void *ctx, err *e)
{
    char buf[512], q[48], kp[512];
    cfg_node *kn = cfg_kind(n) == CFG_MAP ? cfg_get(n, "kind") : n;
    const char *name = kn ? cfg_scalar(kn) : NULL;
    if (cfg_kind(n) == CFG_MAP && !kn)
        return cfg_err(e, AISIM_EINVAL, n, cfg_path(kp, sizeof kp, path, "kind"),
                       "missing required key (expected one of: %s)",
                       names_of(list, buf, sizeof buf));
    const char *kpath = cfg_kind(n) == CFG_MAP ? cfg_path(kp, sizeof kp, path, "kind") : path;
    const qdisc_ops *qd = name ? qdisc_find(list, name) : NULL;
    if (!qd) {
        char what[64];
        return cfg_err(e, AISIM_EINVAL, kn, kpath, "expected one of: %s, found %s",
                       names_of(list, buf, sizeof buf),
                       name ? cfg_quote(name, q, sizeof q) : cfg_describe(kn, what, sizeof what));
    }
    if (qd->is_aqm && (pc->ecn_k_bytes > 0 || pc->red_min_bytes > 0))
        return cfg_err(e, AISIM_EINVAL, kn, kpath,
                       "expected no ecn_k or red_min on a link whose qdisc %s decides marking "
                       "(give its settings in the qdisc map), found %s %lld B", qd->name,
                       pc->ecn_k_bytes > 0 ? "ecn_k" : "red_min",
                       (long long)(pc->ecn_k_bytes > 0 ? pc->ecn_k_bytes : pc->red_min_bytes));
    void *conf = qd->conf_size ? conf_alloc(ctx, qd->conf_size) : NULL;
    if (conf)
        memset(conf, 0, qd->conf_size);
    int rc = 0;
    /* The map's keys: kind, then the discipline's. */
    cfg_key keys[QDISC_MAX_KEYS + 2] = {
        {.name = "kind", .type = CFG_NODE, .off = 0, .flags = CFG_OPTIONAL, .help = "discipline"},
    };
    size_t nk = 1;
    for (size_t i = 0; qd->keys && qd->keys[i].name; i++) {
        assert(nk < QDISC_MAX_KEYS);
        keys[nk++] = qd->keys[i];
    }
    keys[nk] = (cfg_key){0};
    if (cfg_kind(n) == CFG_MAP) {
        /* `kind` is bound into a scratch slot: conf's offset 0 is the
         * discipline's. */
        qdisc_scratch scratch = {0};
        assert(qd->conf_size <= sizeof scratch.conf);
        for (size_t i = 1; i < nk; i++)
            keys[i].off += offsetof(qdisc_scratch, conf);
        rc = cfg_bind(n, path, keys, &scratch, e);
        if (!rc && conf)
            memcpy(conf, scratch.conf, qd->conf_size);
    } else {
        for (size_t i = 1; i < nk && !rc; i++)
            if (!keys[i].def && !(keys[i].flags & CFG_OPTIONAL))
                rc = cfg_err(e, AISIM_EINVAL, n, path,
                             "qdisc %s: missing required key %s (give qdisc: {kind: %s, %s: ...})",
                             qd->name, keys[i].name, qd->name, keys[i].name);
        if (!rc && nk > 1) {
            cfg_doc *d = NULL;
            if ((rc = cfg_load_string(path, "{}", 2, &d, e)) == 0)
                rc = cfg_bind(cfg_root(d), path, keys + 1, conf, e);
            cfg_free(d);
        }
    }
    if (!rc && qd->configure)
        rc = qd->configure(conf, n, path, pc, e);
    if (rc)
        return rc;
    pc->qdisc = qd;
    pc->qdisc_conf = conf;
    return 0;
}
