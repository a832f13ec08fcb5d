/*
 * main.c - the aisim command.
 *
 *   aisim run SCENARIO [--out DIR] [--force] [--seed N] [--set key.path=value]... [-q] [-v]
 *   aisim check SCENARIO [--seed N] [--set key.path=value]...
 *   aisim sweep SCENARIO --vary KEY=V1,V2,... [--seeds N|A..B] [--out DIR] ...
 *   aisim plot RUN_DIR|SWEEP_DIR [--format png|svg] [--all] [--metric COL]...
 *   aisim calibrate pin [--max-size SIZE] [--block SIZE] [--huge] [--out FILE]
 *   aisim list | demo | bench | version | help [COMMAND]
 *
 * Exit codes: 0 success, 1 the run failed, 2 bad usage or bad scenario.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisim/log.h"
#include "aisim/model.h"
#include "aisim/netext.h"
#include "aisim/netreg.h"
#include "cli/cli.h"
#include "cli/examples.h"
#include "cli/run.h"
#include "cli/scenario.h"
#include "cli/blaspin.h"

static void bench_cases(FILE *f);

static const struct cmd_help {
    const char *name, *usage, *text;
    void (*more)(FILE *f);      /* prints what follows the text, or NULL */
} helps[] = {
    {"run", "aisim run SCENARIO [--out DIR] [--force] [--seed N] [--set key.path=value]...\n"
            "                 [-q] [-v]",
     "Runs a scenario (a YAML file, or a built-in example name from `aisim list`) and\n"
     "writes its run directory (default out/<name>): summary.json, CSV tables,\n"
     "scenario.yaml (the resolved scenario, every default filled in) and run.log.\n"
     "Files appear only when the run completes.  DIR must be new, empty or an aisim\n"
     "directory (it holds the marker file .aisim); a run locks it while it writes,\n"
     "so a second run into it fails at once.\n\n"
     "  --out DIR           run directory\n"
     "  --force             write into a non-empty DIR that is not an aisim directory\n"
     "                      (its other files are kept)\n"
     "  --seed N            seed of every random stream (overrides `seed:`)\n"
     "  --set k.path=value  override any scenario key; value is YAML; lists as k[2].x\n"
     "  -q, --quiet         no progress line\n"
     "  -v, --verbose       more diagnostics (and where in aisim an error was raised);\n"
     "                      every result after the headlines, nested ones too\n\n"
     "It prints the model's headline results first, with units, then the top-level\n"
     "counters of summary.json (those that apply to the run: a flow-level run has no\n"
     "packet counters).\n", NULL},
    {"check", "aisim check SCENARIO [--seed N] [--set key.path=value]...",
     "Validates a scenario (keys, types, units, ranges, data files) without running it.\n", NULL},
    {"sweep", CLI_SWEEP_USAGE,
     "Runs a scenario at every point of the cartesian product of the --vary lists\n"
     "(times the seeds), each point an ordinary run into DIR/<point>/, named by the\n"
     "varied keys' last components and values (e.g. load=0.5,cc=dctcp,seed=2), and\n"
     "writes DIR/sweep.csv and DIR/sweep.json: one row per point with the varied\n"
     "values, seed, run_dir and every numeric result of its summary.json (nested\n"
     "keys joined with dots; wall-clock figures left out).  Every point is checked\n"
     "before any runs; the tables appear only when every point completed.\n"
     "`aisim plot DIR` draws each result against the first varied key.\n\n"
     "  --vary KEY=V1,V2,...  values of one key, each YAML as in --set; commas inside\n"
     "                      [...], {...} or quotes do not split: --vary 'k={a: 1, b: 2},{a: 3}'\n"
     "  --seeds N | A..B    run each point with seeds 1..N or A..B (default: the\n"
     "                      scenario's own seed)\n"
     "  --out DIR           sweep directory (default out/<name>-sweep); new, empty or\n"
     "                      an aisim directory, locked while the sweep runs\n"
     "  --force             use a non-empty DIR that is not an aisim directory\n"
     "  --set k.path=value  override a key at every point\n"
     "  -q, --quiet         no line per point\n"
     "  --jobs N            run N points at a time in child processes (default 1);\n"
     "                      the tables do not depend on N\n", NULL},
    {"list", "aisim list", "Lists the models and the built-in example scenarios.\n", NULL},
    {"demo", "aisim demo [--out DIR]",
     "A short tour: runs built-in examples and prints one headline table per module.\n", NULL},
    {"bench", "aisim bench [--quick] [CASE]...",
     "Reference benchmarks: events/s, simulated seconds per wall second and peak\n"
     "memory for the event engine and fixed reference scenarios.\n"
     "  --quick   smaller sizes (for a smoke test)\n"
     "  CASE      run only these cases, of:\n", bench_cases},
    {"plot", "aisim plot RUN_DIR|SWEEP_DIR [--format png|svg] [--all] [--metric COL]...",
     "Draws the tables of a completed run with gnuplot: one image per figure in the run\n"
     "directory, beside a self-contained gnuplot script (NAME.gp) to restyle it; the\n"
     "model's own figures, and with --all every numeric column of every other table.\n"
     "The figures join summary.json's files, so a later run into the directory removes them.\n"
     "On a sweep directory (aisim sweep) draws sweep-COL.png: result COL against the\n"
     "first varied key, one line per value of the others, the mean over seeds with its\n"
     "95 % confidence interval as error bars (bars for a categorical key); every\n"
     "result that varies, or only the columns named with --metric.\n", NULL},
    {"calibrate", "aisim calibrate pin [--max-size SIZE] [--block SIZE] [--huge] [--out FILE]",
     "Measures real memory pinning (mlock) on this machine with the library in src/real/pin:\n"
     "full pinning time per GiB (fresh regions of 64 MiB doubling up to --max-size, default\n"
     "1GiB), on-demand first touch per block (--block, default 2MiB), map-cache lookup and\n"
     "unpinning; writes the calibration file (--out, default pin-calibration.yml) that the\n"
     "Stellar model reads as stellar.pin_calibration.  RLIMIT_MEMLOCK is raised where\n"
     "allowed; --huge asks for transparent huge pages.\n", NULL},
    {"version", "aisim version",
     "Prints the version and the directory built-in examples read their data from:\n"
     "$AISIM_HOME if set, else PREFIX/share/aisim for a binary installed in PREFIX/bin\n"
     "(make install), else the source tree it was built in.\n", NULL},
    {"help", "aisim help [COMMAND]", "Shows help for aisim or one command.\n", NULL},
    {NULL, NULL, NULL, NULL},
};

/* The case list comes from bench.c's table, so help cannot miss a case. */
static void bench_cases(FILE *f)
{
    cli_bench_list_cases(f, "            ", 80);
}

static void usage_all(FILE *f)
{
    fprintf(f, "aisim %s - simulator for cloud and edge AI infrastructure\n\nusage:\n",
            AISIM_VERSION);
    for (const struct cmd_help *h = helps; h->name; h++)
        fprintf(f, "  %s\n", h->usage);
    fprintf(f, "\nexit codes: 0 ok, 1 run failed, 2 bad usage or bad scenario\n"
               "`aisim help COMMAND` or `aisim COMMAND --help` for details.\n");
}

static int help_cmd(const char *name)
{
    for (const struct cmd_help *h = helps; h->name; h++)
        if (strcmp(h->name, name) == 0) {
            printf("usage: %s\n\n%s", h->usage, h->text);
            if (h->more)
                h->more(stdout);
            return EXIT_OK;
        }
    fprintf(stderr, "aisim: unknown command \"%s\"\n", name);
    usage_all(stderr);
    return EXIT_BAD_INPUT;
}

static int bad_usage(const char *cmd, const char *msg)
{
    fprintf(stderr, "aisim %s: %s\n", cmd, msg);
    for (const struct cmd_help *h = helps; h->name; h++)
        if (strcmp(h->name, cmd) == 0)
            fprintf(stderr, "usage: %s\n", h->usage);
    return EXIT_BAD_INPUT;
}

static int cmd_run(int argc, char **argv, int check)
{
    const char *cmd = check ? "check" : "run";
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'}, {"seed", required_argument, 0, 's'},
        {"set", required_argument, 0, 'S'}, {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},   {"help", no_argument, 0, 'h'},
        {"force", no_argument, 0, 'f'},     {0, 0, 0, 0},
    };
    run_opts o = {.progress = isatty(2)};
    int verbose = 0;
    const char **sets = xcalloc((size_t)argc + 1, sizeof *sets);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:s:S:qvfh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg) {
                free(sets);
                return bad_usage(cmd, "--out expects a directory name, found \"\"");
            }
            o.out_dir = optarg;
            break;
        case 'f': o.force = 1; break;
        case 's': o.seed = optarg; break;
        case 'S': {
            char m[512];
            if (cli_bad_set(optarg, optind < argc ? argv[optind] : NULL, m, sizeof m)) {
                free(sets);
                return bad_usage(cmd, m);
            }
            sets[o.nsets++] = optarg;
            break;
        }
        case 'q': o.progress = 0; break;
        case 'v': log_stderr_level = LOG_DEBUG; verbose = 1; break;
        case 'h': free(sets); return help_cmd(cmd);
        default: {
            char m[256];
            const char *bad = argv[optind - 1];
            if (!strncmp(bad, "--seeds", 7))    /* several seeds are a sweep */
                snprintf(m, sizeof m, "%s takes one --seed N; for several seeds run a sweep: "
                         "aisim sweep SCENARIO --seeds N (or A..B)", cmd);
            else
                snprintf(m, sizeof m, "unknown or incomplete option \"%s\"", bad);
            free(sets);
            return bad_usage(cmd, m);
        }
        }
    }
    if (optind != argc - 1) {
        free(sets);
        return bad_usage(cmd, optind >= argc ? "missing SCENARIO" : "expected one SCENARIO");
    }
    /* --seed is checked with the scenario (scenario_parse_seed()): one
     * message for the command and for run_opts callers. */
    o.scenario = argv[optind];
    o.sets = sets;
    o.check_only = check;
    err e = {0};
    json_t *sum = NULL;
    char *dir = NULL;
    int r = run_scenario(&o, check ? NULL : &sum, &dir, &e);
    free(sets);
    if (r) {
        cli_print_error(&e);
        return run_exit_code(r);
    }
    if (check)
        printf("%s: ok\n", o.scenario);
    else
        cli_print_results(stdout, dir, sum, verbose);
    json_decref(sum);
    free(dir);
    return EXIT_OK;
}

static int cmd_list(void)
{
    printf("models:\n");
    for (const model_ops *const *m = model_all(); *m; m++)
        printf("  %-12s %s\n", (*m)->name, (*m)->summary);
    const netext_ops *const *ext = net_registry_builtin()->extensions;
    printf("\nnetwork extensions (net.extensions.NAME):\n");
    for (; ext && *ext; ext++)
        printf("  %-12s %s\n", (*ext)->name, (*ext)->summary);
    printf("\nbuilt-in examples (aisim run NAME):\n");
    int w = 0;
    for (const struct embedded_example *x = embedded_examples; x->name; x++)
        if ((int)strlen(x->name) > w)
            w = (int)strlen(x->name);
    for (const struct embedded_example *x = embedded_examples; x->name; x++) {
        /* The scenario's top-level `description:` line, if it has one. */
        const char *d = strstr(x->text, "\ndescription:");
        int n = 0;
        if (d) {
            d += strlen("\ndescription:");
            while (*d == ' ')
                d++;
            n = (int)strcspn(d, "\n");
        }
        printf("  %-*s  %.*s\n", w, x->name, n, d ? d : "");
    }
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    aisim_blas_pin(argv);   /* byte-identical results across machines */
    /* jansson's allocations fail the way ours do: a message and exit 1. */
    json_set_alloc_funcs(xmalloc, free);
    if (argc < 2) {
        usage_all(stderr);
        return EXIT_BAD_INPUT;
    }
    const char *cmd = argv[1];
    int sub_help = argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "check"))
        return cmd_run(argc - 1, argv + 1, 1);
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        if (argc > 2)
            return help_cmd(sub_help ? "help" : argv[2]);
        usage_all(stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        if (sub_help)
            return help_cmd("version");
        if (argc > 2)       /* as `list`: an extra word is a mistake, not ignored */
            return bad_usage("version", "takes no arguments");
        printf("aisim %s\ndata: %s\n", AISIM_VERSION, scenario_data_dir());
        return EXIT_OK;
    }
    if (!strcmp(cmd, "list")) {
        if (sub_help)
            return help_cmd("list");
        if (argc > 2)
            return bad_usage("list", "takes no arguments");
        return cmd_list();
    }
    if (!strcmp(cmd, "demo"))
        return sub_help ? help_cmd("demo") : cli_demo(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep"))
    {
        int r = sub_help ? CLI_HELP : cli_sweep(argc - 1, argv + 1);
        return r == CLI_HELP ? help_cmd("sweep") : r;
    }
    if (!strcmp(cmd, "plot"))
        return sub_help ? help_cmd("plot") : cli_plot(argc - 1, argv + 1);
    if (!strcmp(cmd, "calibrate"))
        return sub_help ? help_cmd("calibrate") : cli_calibrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return sub_help ? help_cmd("bench") : cli_bench(argc - 1, argv + 1);
    fprintf(stderr, "aisim: unknown command \"%s\"\n", cmd);
    usage_all(stderr);
    return EXIT_BAD_INPUT;
}
