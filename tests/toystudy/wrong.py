from collect_stages import WrongStage as STAGE  # noqa: F401
