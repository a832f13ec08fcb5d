/*
 * main.c - aisim-sdtcp-real: SDTCP on real Linux TCP (docs/sdtcp.md,
 * "Running it for real").
 *
 *   aisim-sdtcp-real testbed TESTBED.yaml [--out DIR] [--set K=V]...
 *   aisim-sdtcp-real router TESTBED.yaml --arm A --dev IF --receiver IP ...
 *   aisim-sdtcp-real server [--port N] [--duration T]
 *   aisim-sdtcp-real client --servers IP,... [--bg IP,...] ...
 *   aisim-sdtcp-real check TESTBED.yaml [--set K=V]...
 *   aisim-sdtcp-real clean        namespaces of killed testbeds
 *
 * testbed builds the namespaces and runs the others inside them; router,
 * server and client can also be run by hand on a real router and hosts.
 */
#include <stdio.h>
#include <string.h>

#include "real/sdtcp/bin/tb.h"

static int check(int argc, char **argv)
{
    char *sets[32];
    int nsets = 0;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--set") && i + 1 < argc && nsets < 32)
            sets[nsets++] = argv[++i];
        else if (!file)
            file = argv[i];
        else
            file = NULL, i = argc;
    }
    if (!file) {
        fprintf(stderr, "usage: aisim-sdtcp-real check TESTBED.yaml [--set KEY=VALUE]...\n");
        return 2;
    }
    tb_cfg c;
    cfg_doc *doc = NULL;
    err e = {0};
    int rc = tb_load(file, sets, nsets, &c, &doc, &e);
    if (rc)
        fprintf(stderr, "aisim-sdtcp-real: %s\n", e.msg);
    else
        cfg_emit(cfg_root(doc), stdout, &e);
    cfg_free(doc);
    return rc ? 2 : 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    if (!strcmp(cmd, "testbed"))
        return tb_testbed(argc - 1, argv + 1);
    if (!strcmp(cmd, "router"))
        return tb_router(argc - 1, argv + 1);
    if (!strcmp(cmd, "server"))
        return tb_server(argc - 1, argv + 1);
    if (!strcmp(cmd, "client"))
        return tb_client(argc - 1, argv + 1);
    if (!strcmp(cmd, "clean")) {
        tb_clean_stale();
        return 0;
    }
    if (!strcmp(cmd, "check"))
        return check(argc - 1, argv + 1);
    fprintf(stderr, "usage: aisim-sdtcp-real testbed|router|server|client|check|clean ... "
                    "(docs/sdtcp.md, \"Running it for real\")\n");
    return 2;
}
