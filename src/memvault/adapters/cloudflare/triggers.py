"""The Worker's cron triggers, stated once: in `[triggers] crons` of wrangler.toml. A Worker cannot
read its own triggers, so scripts/build_worker.py writes this module's copy in the bundle from the
wrangler.toml environment being built; `/health` counts them. This copy, outside a bundle,
declares none."""

CRONS: tuple[str, ...] = ()
