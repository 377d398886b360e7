/* What an admission endpoint answers, through the collector's own path: the
 * document is parsed (text, OpenMetrics or JSON form, by the first byte) and
 * ingested twice, a scrape period apart, into a two-route store, so the rate,
 * reset and histogram code sees the fuzzed values too. */
#include <string.h>

#include "collectors/admission.h"
#include "core/config.h"
#include "core/model.h"
#include "tests/fuzz/fuzz.h"
#include "io/conffile.h"

static const char cfg_text[] =
    "[bedtop]\nregion = us-east-1\n"
    "[route triage]\nmodel = us.anthropic.claude-sonnet-4-5-20250929-v1:0\nmax_tokens = 1024\n"
    "[route batch]\nmodel = anthropic.claude-3-haiku-20240307-v1:0\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    struct bt_prom_doc d;
    char err[256] = "";
    bool ok;
    bt_prom_init(&d);
    switch (data[0] % 4) {
    case 0: ok = bt_prom_parse(&d, text, len, BT_PROM_TEXT, err, sizeof err); break;
    case 1: ok = bt_prom_parse(&d, text, len, BT_PROM_OPENMETRICS, err, sizeof err); break;
    case 2: ok = bt_prom_parse_json(&d, text, len, err, sizeof err); break;
    default: ok = bt_prom_parse_api(&d, "q", text, len, err, sizeof err); break;
    }
    FUZZ_NEED_ERR(ok, err);
    if (!ok) {
        bt_prom_free(&d);
        return 0;
    }
    struct bt_config cfg;
    bt_config_init(&cfg);
    if (!bt_config_parse_string(&cfg, cfg_text, "fuzz.conf", err, sizeof err))
        abort(); /* the fixed config is valid */
    bt_config_finish(&cfg);
    struct bt_store st;
    bt_store_init(&st, cfg.nroutes, 60);
    bt_store_bind_routes(&st, cfg.routes);
    struct bt_adm_scope sc = {.routes = cfg.routes, .nroutes = cfg.nroutes, .scraped_route = -1};
    bool covered[2] = {false, false};
    double t0 = 1764410400.0;
    if (data[0] % 4 == 3) {
        (void)bt_adm_ingest_api(&d, (enum bt_signal)(data[0] / 4 % BT_SIG_COUNT), &sc, t0, &st,
                                covered);
    } else {
        struct bt_adm_state *as = bt_adm_state_new(cfg.nroutes);
        (void)bt_adm_ingest(as, &d, &sc, t0, &st, covered);
        (void)bt_adm_ingest(as, &d, &sc, t0 + 15, &st, covered);
        bt_adm_state_free(as);
    }
    bt_prom_free(&d);
    bt_store_free(&st);
    bt_config_free(&cfg);
    return 0;
}
