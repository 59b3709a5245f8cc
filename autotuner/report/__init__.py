"""What the commands print and the dashboard shows from stored results: study summaries
(`autotune status`), the trials table, the performance report with the roofline, and the table
formats."""
