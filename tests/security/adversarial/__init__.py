"""The adversarial suite of issue 5: attack programs that report what they achieved (see conftest.py)."""
