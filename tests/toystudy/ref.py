from collect_stages import RefStage as STAGE  # noqa: F401
