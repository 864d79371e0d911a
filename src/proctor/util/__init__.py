"""Small helpers every layer uses: errors as `path:line:` lines, lenient text reading and atomic writes,
parsing limits, safe paths and terminal text, redaction of secrets, the progress bar.
"""
