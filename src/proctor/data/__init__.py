"""What is evaluated: the typed records (`records`), their file formats (`formats/`), prompts, few-shot
examples, coverage, and the Task (items + prompt builder + scorer).
"""
