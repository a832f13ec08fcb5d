/*
 * demo_net.c - the network part of `aisim demo`: TCP incast goodput
 * collapse (examples/net/incast.yaml as it is: 1 Gbps star, 64 KiB port
 * buffers, 256 KiB per sender per round, 20 rounds) as a table of senders x
 * transport: the sweep the table cites.
 */
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/run.h"

int demo_net(const char *out_root)
{
    static const int senders[] = {1, 4, 16, 32, 64};
    static const struct {
        const char *label, *cc, *rto;
    } tr[] = {
        {"NewReno, min RTO 200ms", "net.transport.cc=newreno", "net.transport.min_rto=200ms"},
        {"NewReno, min RTO 1ms", "net.transport.cc=newreno", "net.transport.min_rto=1ms"},
        {"DCTCP, min RTO 200ms", "net.transport.cc=dctcp", "net.transport.min_rto=200ms"},
        {"DCTCP, min RTO 1ms", "net.transport.cc=dctcp", "net.transport.min_rto=1ms"},
    };
    enum { NS = sizeof senders / sizeof *senders, NT = sizeof tr / sizeof *tr };
    printf("net: TCP incast, goodput as %% of the 1 Gbps receiver link (examples/net/incast.yaml:\n"
           "     star, 64 KiB port buffers, 256 KiB per sender per round, 20 rounds, seed 1)\n");
    static const char *const cite[] = {"--vary net.transport.cc=newreno,dctcp",
                                       "--vary net.transport.min_rto=200ms,1ms",
                                       "--vary net.incast.senders=1,4,16,32,64"};
    demo_cite("sweep", "net/incast", cite, 3);
    printf("\n");
    printf("  %-24s", "senders:");
    for (int j = 0; j < NS; j++)
        printf(" %7d", senders[j]);
    printf("\n");
    for (int i = 0; i < NT; i++) {
        printf("  %-24s", tr[i].label);
        for (int j = 0; j < NS; j++) {
            char n[64], dir[512];
            snprintf(n, sizeof n, "net.incast.senders=%d", senders[j]);
            snprintf(dir, sizeof dir, "%s/incast-%d-%d", out_root, i, senders[j]);
            const char *sets[] = {tr[i].cc, tr[i].rto, n};
            json_t *sum;
            int r = demo_run("net/incast", dir, sets, 3, &sum);
            if (r)
                return r;
            double g = demo_num(sum, "incast", "goodput_fraction_of_link");
            printf(" %6.1f%%", 100 * g);
            fflush(stdout);
            json_decref(sum);
        }
        printf("\n");
    }
    printf("\n  the collapse of Nagle et al. (2004) and Vasudevan et al. (SIGCOMM 2009): lost tails\n"
           "  wait for the retransmission timeout; a 1 ms minimum RTO or DCTCP with it recovers\n"
           "  (docs/network.md)\n");
    return 0;
}
