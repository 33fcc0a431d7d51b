//! Regression tests: one file per bug fixed, named after the bug, holding the tests written for
//! it; each file's documentation says what went wrong. They build as one test binary
//! (`cargo test -p strata-kv --test regressions`); `tests/README.md` has the convention.
//! `workload.rs` is the one file that is not a bug: the workload the crash and I/O-error
//! regressions share.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

#[path = "../corruption/mod.rs"]
mod corruption;
#[path = "../support/mod.rs"]
mod support;
mod workload;

mod background_panic;
mod cached_block_skipped_verification;
mod checkpoint_inside_the_source;
mod compact_range_deleted_on_its_caller;
mod compaction_copied_damage;
mod compaction_inputs_deleted;
mod deleted_live_log_went_unnoticed;
mod empty_write_batch;
mod failed_refresh_hid_replayed_records;
mod failed_value_file_removal_asked_for_flushes;
mod faults_during_open;
mod flush_into_a_gap_of_an_in_place_rewrite;
mod get_many_waits_for_a_busy_rayon_pool;
mod get_resolved_a_pointer_after_releasing_its_state;
mod get_user_key_spanning_files;
mod manifest_damaged_tail;
mod memory_only_scan_skipped_what_it_could_not_read;
mod missing_current_deleted_tables;
mod out_of_range_numbers_on_disk;
mod oversized_batch_is_refused;
mod panic_in_a_write_group;
mod panicking_deletion_pass_left_a_step_waiting;
mod power_loss_new_file_entries;
mod range_delete_skip_read_past_the_upper_bound;
mod range_deleted_space_kept_for_a_snapshot;
mod read_only_checkpoint_lost_log_records;
mod recovered_batches_are_checked;
mod refresh_forgot_recorded_extensions;
mod reopen_after_io_error;
mod repair_dropped_values_it_could_not_read;
mod repair_ignored_value_pointers;
mod repair_keeps_newest_version;
mod repair_kept_damaged_meta_blocks;
mod repair_left_value_files_to_be_deleted;
mod repair_salvages_past_lost_values;
mod reuse_logs_after_torn_tail;
mod snapshot_kept_every_later_version;
mod unverified_meta_blocks;
mod value_file_io_errors_went_unseen;
mod zeroed_record_header;
