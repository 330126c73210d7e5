"""Running a deployment: the nightly maintenance pass and its cursor, backups and the restore that
reads them back, and what `/health` reports. The maintenance pass, the backup and the restore tend
both wings (conversation memory and the brain), so they live here, on the floor, not in either."""
