"""AMemOps scorers and statistics: one answer and a played stream's rows (:mod:`.scoring`),
accuracy tables and contrasts (:mod:`.tables`), breakdowns (:mod:`.breakdowns`), the
update-specific interaction (:mod:`.interaction`), matched-history statistics (:mod:`.history`)
and their report files (:mod:`.history_report`), state-intervention statistics
(:mod:`.interventions`)."""
